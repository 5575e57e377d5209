#!/bin/bash
# frctl upload against a real PUT server on loopback (tests/tools/put-server.py)
# and the incidents of a real daemon (frctl freeze):
#   - each incident arrives byte for byte (sha256), under its file name,
#     with upload.url's query string kept; what is not a complete
#     incident (the spare file, a .tmp) is never sent; user name, password
#     and query string never appear in frctl's output;
#   - a second run sends nothing again;
#   - with the server down: exit 1, the failure on stderr, nothing marked
#     uploaded; with it back, the next run sends it;
#   - an HTTP error (507) is a failure too, with its status;
#   - more incidents pending than upload.queue: only the newest that many
#     are tried, the skip is said with its count, the next run sends the rest;
#   - an incident the daemon is writing (ID.fri.tmp) when a run lists the
#     directory is waited for and sent by that run (the path unit would
#     not start another for its rename); a stale .tmp is not waited for;
#   - incidents are never removed or changed by it;
#   - credentials from upload.netrc: without them the server's 401 is a
#     failure, with them the incident goes; an unreadable one is exit 2;
#   - a bad upload.url: one line naming it, exit 2; an empty one: uploads
#     are off, exit 0.
BUILD=$1
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/put-server.sh"
trap 'stop_server; cleanup' EXIT

# freeze: one more incident, returned once its file is there.
incidents() {
	"$FRCTL" --store "$T/store" incidents --json | jq length
}
freeze() {
	local n
	n=$(incidents)
	"$FRCTL" --store "$T/store" freeze >/dev/null || fail "frctl freeze failed"
	for _ in $(seq 100); do
		[ "$(incidents)" -gt "$n" ] && return 0
		sleep 0.1
	done
	fail "no incident file within 10 s of frctl freeze"
}

# upload: frctl upload with $T/up.conf; its exit status in $rc, its output
# in $T/out and $T/err.
upload() {
	rc=0
	"$FRCTL" --config "$T/up.conf" --store "$T/store" upload --state "$T/state/uploaded.json" \
		>"$T/out" 2>"$T/err" || rc=$?
	cat "$T/out" "$T/err" >>"$T/all-output"
}

requests() {
	[ -f "$T/requests.log" ] && wc -l <"$T/requests.log" || echo 0
}

# same_bytes: every incident in the store is in $T/put, byte for byte.
same_bytes() {
	local f n=0
	for f in "$T"/store/incidents/*.fri; do
		[ -f "$T/put/$(basename "$f")" ] || fail "$(basename "$f") was not uploaded (server has: $(ls "$T/put"))"
		[ "$(sha256sum <"$f")" = "$(sha256sum <"$T/put/$(basename "$f")")" ] ||
			fail "$(basename "$f"): the server's copy differs from the incident"
		n=$((n + 1))
	done
	echo "$n"
}

mkdir -p "$T/state"
cat >"$T/fr.conf" <<'CONF'
store = { size = "16M"; segments = 4; sync_interval = "200ms"; };
triggers = { rules = ( { name = "manual"; condition = "manual"; before = "1s"; after = "300ms"; } ); };
CONF
start_daemon "$T/fr.conf"
start_server
# the secrets: a user name and password, and an object store's signature
write_conf() {
	cat >"$T/up.conf" <<CONF
upload = { url = "http://frtest:hunter2@127.0.0.1:$PORT/dav/?sig=S3CRET"; queue = 2; timeout = "5s"; };
CONF
}
write_conf

# --- each incident, byte for byte; never the spare or a temporary file
freeze
freeze
: >"$T/store/incidents/20991231T000000Z-manual.fri.tmp"
touch -d '1 minute ago' "$T/store/incidents/20991231T000000Z-manual.fri.tmp"
upload
[ "$rc" -eq 0 ] || fail "frctl upload: exit $rc: $(cat "$T/err")"
[ "$(same_bytes)" -eq 2 ] || fail "not 2 incidents uploaded"
[ "$(ls "$T/put" | wc -l)" -eq 2 ] || fail "the server got more than the 2 incidents: $(ls -a "$T/put")"
grep -q -e '\.spare' -e '\.tmp' "$T/requests.log" && fail "a file that is no complete incident was sent: $(cat "$T/requests.log")"
awk '{ print $2 }' "$T/requests.log" | grep -v -q '^/dav/[^/?]*\.fri?sig=S3CRET$' &&
	fail "not PUT to /dav/NAME.fri?sig=S3CRET: $(cat "$T/requests.log")"
jq -e '.uploaded | length == 2 and all(.[]; (.sha256 | test("^[0-9a-f]{64}$")) and .bytes > 0)' \
	"$T/state/uploaded.json" >/dev/null || fail "state file: $(cat "$T/state/uploaded.json")"
ok "2 incidents uploaded, sha256 equal, PUT to $(head -1 "$T/requests.log" | awk '{ print $2 }' | sed 's/[0-9TZ]*-manual/ID/'); $(tail -1 "$T/out")"

# --- once only
n=$(requests)
upload
[ "$rc" -eq 0 ] || fail "second run: exit $rc: $(cat "$T/err")"
[ "$(requests)" -eq "$n" ] || fail "the second run sent again: $(tail -n +$((n + 1)) "$T/requests.log")"
grep -q "0 uploaded, 0 failed, 0 waiting, 2 uploaded before" "$T/out" || fail "second run said: $(cat "$T/out")"
ok "second run: nothing sent again ($(cat "$T/out"))"

# --- server down: a failure, logged, nothing marked; back: sent
stop_server
freeze
cp "$T/state/uploaded.json" "$T/state-before.json"
upload
[ "$rc" -eq 1 ] || fail "server down: exit $rc, want 1"
grep -q "not uploaded to http://127.0.0.1:$PORT/dav/.*\.fri: .*\(connect\|Connection refused\)" "$T/err" ||
	fail "server down: no failure line naming the server: $(cat "$T/err")"
cmp -s "$T/state/uploaded.json" "$T/state-before.json" || fail "server down, yet the state changed"
ok "server down: exit 1, $(head -1 "$T/err" | sed 's/[0-9TZ]*-manual/ID/')"
start_server
upload
[ "$rc" -eq 0 ] || fail "server back: exit $rc: $(cat "$T/err")"
[ "$(same_bytes)" -eq 3 ] || fail "not 3 incidents uploaded"
ok "server back: $(head -1 "$T/out" | sed 's/[0-9TZ]*-manual/ID/; s/sha256 [0-9a-f]*/sha256 .../')"

# --- an HTTP error is a failure, with its status
stop_server
start_server --status 507
freeze
n=$(requests)
upload
[ "$rc" -eq 1 ] || fail "HTTP 507: exit $rc, want 1"
grep -q "the server refused it (HTTP 507)" "$T/err" || fail "HTTP 507: $(cat "$T/err")"
[ "$(requests)" -eq $((n + 1)) ] || fail "HTTP 507: not one request"
said=$(head -1 "$T/err" | sed 's/.*: //')
stop_server
start_server
upload
[ "$rc" -eq 0 ] && [ "$(same_bytes)" -eq 4 ] || fail "after the 507: exit $rc: $(cat "$T/err")"
ok "HTTP 507: exit 1, '$said'; sent at the next run"

# --- queue: 3 pending, upload.queue = 2: the 2 newest, then the oldest
freeze
freeze
freeze
mapfile -t newest < <(ls "$T/store/incidents" | grep '\.fri$' | sort | tail -3)
n=$(requests)
upload
[ "$rc" -eq 0 ] || fail "queue: exit $rc: $(cat "$T/err")"
[ "$(requests)" -eq $((n + 2)) ] || fail "queue 2: $(($(requests) - n)) requests, want 2"
sent=$(tail -n 2 "$T/requests.log" | awk '{ print $2 }' | sed 's|^/dav/||; s|?.*||' | sort | tr '\n' ' ')
[ "$sent" = "${newest[1]} ${newest[2]} " ] || fail "queue 2: sent $sent, want the newest: ${newest[1]} ${newest[2]}"
grep -q "1 older incident not uploaded yet waits for the next run (upload.queue" "$T/err" ||
	fail "queue: the skip is not said: $(cat "$T/err")"
said=$(sed 's/^frctl: upload: //' "$T/err")
upload
[ "$rc" -eq 0 ] && [ "$(requests)" -eq $((n + 3)) ] || fail "queue: the next run did not send the oldest"
grep -q "${newest[0]%.fri}" "$T/out" || fail "queue: the next run sent $(cat "$T/out")"
[ "$(same_bytes)" -eq 7 ] || fail "not 7 incidents uploaded"
ok "queue 2 of 3 pending: the newest 2 sent, '$said', the oldest at the next run"

# --- an incident being written when the run lists: waited for, sent
rm "$T/store/incidents/20991231T000000Z-manual.fri.tmp"
late=20991231T000001Z-late.fri
cp "$T/store/incidents/${newest[2]}" "$T/store/incidents/$late.tmp"
(sleep 1.5 && mv "$T/store/incidents/$late.tmp" "$T/store/incidents/$late") &
MVPID=$!
upload
wait "$MVPID"
[ "$rc" -eq 0 ] || fail "late: exit $rc: $(cat "$T/err")"
grep -q "^uploaded ${late%.fri} " "$T/out" || fail "the incident named during the run was not sent by it: $(cat "$T/out")"
[ "$(same_bytes)" -eq 8 ] || fail "not 8 incidents uploaded"
ok "an incident renamed into place 1.5 s into a run: sent by that run"

# --- never removed or changed; the secrets never printed
[ "$(ls "$T/store/incidents" | grep -c '\.fri$')" -eq 8 ] || fail "incident files went missing"
if grep -e hunter2 -e S3CRET -e frtest "$T/all-output"; then
	fail "frctl upload printed a secret of upload.url"
fi
ok "8 incidents in the store, all uploaded byte for byte; no secret of the URL in the output"

# --- credentials from upload.netrc (not in the URL, and not printed)
stop_server
start_server --auth frtest:hunter2
printf 'machine 127.0.0.1 login frtest password hunter2\n' >"$T/netrc"
chmod 600 "$T/netrc"
printf 'upload = { url = "http://127.0.0.1:%s/dav/"; };\n' "$PORT" >"$T/up.conf"
freeze
: >"$T/all-output"
upload
[ "$rc" -eq 1 ] && grep -q "the server refused it (HTTP 401)" "$T/err" || fail "no credentials: exit $rc: $(cat "$T/err")"
printf 'upload = { url = "http://127.0.0.1:%s/dav/"; netrc = "%s"; };\n' "$PORT" "$T/netrc" >"$T/up.conf"
upload
[ "$rc" -eq 0 ] && [ "$(same_bytes)" -eq 9 ] || fail "with upload.netrc: exit $rc: $(cat "$T/err")"
if grep -e hunter2 -e frtest "$T/all-output"; then
	fail "frctl upload printed the credentials of upload.netrc"
fi
printf 'upload = { url = "http://127.0.0.1:%s/dav/"; netrc = "%s"; };\n' "$PORT" "$T/no-such-netrc" >"$T/up.conf"
upload
[ "$rc" -eq 2 ] && grep -q "upload.netrc \"$T/no-such-netrc\" in $T/up.conf: No such file or directory" "$T/err" ||
	fail "missing upload.netrc: exit $rc: $(cat "$T/err")"
ok "upload.netrc: HTTP 401 without it, sent with it; missing: $(cat "$T/err")"

# --- %H: one configuration, a prefix per host
printf 'upload = { url = "http://127.0.0.1:%s/dav/%%H/"; netrc = "%s"; };\n' "$PORT" "$T/netrc" >"$T/up.conf"
ls "$T/store/incidents" >"$T/before-H"
freeze
upload
newest=$(ls "$T/store/incidents" | grep '\.fri$' | grep -vxF -f "$T/before-H")
[ "$rc" -eq 0 ] && grep -q "^PUT /dav/$(hostname)/$newest " "$T/requests.log" ||
	fail "upload.url with %H: exit $rc, no PUT to /dav/$(hostname)/$newest: $(tail -2 "$T/requests.log")"
[ "$(same_bytes)" -eq 10 ] || fail "with %H: not every incident on the server"
ok "upload.url \"/dav/%H/\": PUT /dav/$(hostname)/$newest"

# --- bad and empty upload.url
for url in "ftp://frtest:hunter2@127.0.0.1/dav/" "http://127.0.0.1:$PORT/dav?sig=S3CRET" "http://[::1/x/"; do
	printf 'upload = { url = "%s"; };\n' "$url" >"$T/up.conf"
	upload
	[ "$rc" -eq 2 ] || fail "upload.url = $url: exit $rc, want 2"
	[ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "^frctl: upload: upload.url .*in $T/up.conf" "$T/err" ||
		fail "upload.url = $url: not one line naming upload.url: $(cat "$T/err")"
	grep -e hunter2 -e S3CRET "$T/err" && fail "the error line shows a secret"
	ok "upload.url = $url: $(cat "$T/err")"
done
printf 'upload = { url = ""; };\n' >"$T/up.conf"
upload
[ "$rc" -eq 0 ] && grep -q "Uploads are off" "$T/out" || fail "upload.url empty: exit $rc, $(cat "$T/out" "$T/err")"
ok "upload.url empty: exit 0, $(cat "$T/out")"
