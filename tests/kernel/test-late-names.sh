#!/bin/bash
# Names at read time, by build id.  A copy of fr-deep-inline stripped of
# everything (--strip-all), its debug information split off, spins under a
# private daemon sampling at 49 Hz whose debug_dir is an empty directory:
# its frames are stored unnamed.  A bundle of the window is made; then,
# from the bundle alone:
#   - as stored (no debug files, no servers): no frame is named fr_deep_*,
#     each of the binary's is "fr-deep-inline+0x...";
#   - with --debug-dir holding the split file (.build-id/xx/rest.debug):
#     >= 95 % of the samples that were in the binary read
#     main;fr_deep_a;fr_deep_b;fr_deep_c, fr_deep_b an inlined frame (json
#     "inlined": true), no frame of the binary unnamed; report names
#     fr_deep_c too;
#   - a real debuginfod (Debian's, on a free loopback port, serving a
#     directory with the debug file) with DEBUGINFOD_URLS pointing at it
#     and an empty --debug-dir: the same names, no warning, the file in
#     libdebuginfod's cache (DEBUGINFOD_CACHE_PATH); without
#     DEBUGINFOD_URLS: unnamed;
#   - the server stopped (SIGSTOP: it takes connections and never
#     answers), a fresh cache: the read ends after DEBUGINFOD_TIMEOUT
#     seconds (2, then the default 10) and within 3 s more, with exactly
#     one warning line, the frames unnamed;
#   - the server killed (connections refused): at once, one warning line,
#     unnamed.
BUILD=$1
HELPERS=$2
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"

for p in objcopy strip readelf; do
	command -v "$p" >/dev/null || fail "$p is missing (Debian package binutils)"
done
for p in debuginfod debuginfod-find; do
	command -v "$p" >/dev/null || fail "$p is missing (Debian package debuginfod, see scripts/deps.sh)"
done
command -v python3 >/dev/null || fail "python3 is missing (Debian package python3)"

# what the servers are is the test's to say, per read (lib.sh unsets
# DEBUGINFOD_URLS)
unset DEBUGINFOD_TIMEOUT DEBUGINFOD_CACHE_PATH DEBUGINFOD_PROGRESS DEBUGINFOD_VERBOSE

SPID=
# end_server: ends our debuginfod, by its pid.  SIGKILL: after a SIGSTOP
# with connections waiting, its SIGTERM exit waits for its worker threads,
# for minutes.  (The shell's "Killed" line is not the test's.)
end_server() {
	if [ -n "$SPID" ] && kill -0 "$SPID" 2>/dev/null; then
		{ kill -KILL "$SPID"; wait "$SPID"; } 2>/dev/null || true
	fi
	SPID=
}
late_cleanup() {
	end_server
	cleanup
}
trap late_cleanup EXIT

# the stripped binary, and its debug information as a -dbgsym package
# would install it
mkdir -p "$T/empty" "$T/srv"
split_debug "$HELPERS/fr-deep-inline" "$T/bin" "$T/debug"

cat >"$T/fr.conf" <<CONF
store = { size = "64M"; segments = 4; sync_interval = "200ms"; };
sources = { sample = { enabled = true; hz = 49; debug_dir = "$T/empty"; }; };
CONF
start_daemon "$T/fr.conf"

"$T/bin/fr-deep-inline" 3 >"$T/inline.pid" || fail "fr-deep-inline failed"
P=$(cat "$T/inline.pid")
# every sample of it in the store: two dumps 0.5 s apart count the same
prev=-1
for _ in $(seq 40); do
	n=$("$FRCTL" --store "$T/store" dump --last 10m --pid "$P" --type sample --format json | grep -c . || true)
	[ "$n" -gt 0 ] && [ "$n" -eq "$prev" ] && break
	prev=$n
	sleep 0.5
done
"$FRCTL" --store "$T/store" dump --last 10m -o "$T/late.frb" || fail "frctl dump -o (a bundle) failed"
stop_daemon

# read_bundle OUT ERR ARGS...: the bundle's folded stacks of the binary's
# process into OUT, stderr into ERR; an empty --debug-dir unless ARGS give
# another (DEBUGINFOD_* assigned before the call reach frctl)
read_bundle() {
	local out=$1 err=$2
	shift 2
	"$FRCTL" dump --input "$T/late.frb" --pid "$P" --format folded --debug-dir "$T/empty" "$@" >"$out" 2>"$err" ||
		fail "frctl dump --input $T/late.frb $* failed: $(head -c 300 "$err")"
}
# counts FOLDED ERE: "K N": N samples, K of them with a stack matching ERE
counts() {
	awk -v re="$2" '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); t += n; if (s ~ re) k += n }
		END { printf "%d %d", k, t }' "$1"
}
top() { sort -k2 -rn "$1" | head -3 | cut -c1-300 | sed 's/^/    /'; }
CHAIN=';main;fr_deep_a;fr_deep_b;fr_deep_c(;|$)'
UNNAMED='(^|;)fr-deep-inline[+]0x'

# check_unnamed WHAT FOLDED ERR: nothing of the binary named
check_unnamed() {
	local k n u
	read -r k n <<<"$(counts "$2" '(^|;)fr_deep_[abc](;|$)')"
	read -r u n <<<"$(counts "$2" "$UNNAMED")"
	[ "$n" -ge 50 ] || fail "$1: $n samples of fr-deep-inline ($P) in the bundle (want >= 50); stacks:
$(top "$2")"
	[ "$k" -eq 0 ] || fail "$1: $k of $n samples name fr_deep_* (want none: nothing to name them from); stacks:
$(top "$2")"
	[ "$u" -ge $((n * 9 / 10)) ] || fail "$1: $u of $n samples have an unnamed frame of the binary (want >= 90 %)"
	ok "$1: $n samples, none named from the debug file ($u with fr-deep-inline+0x... frames)"
}
# check_named WHAT FOLDED ERR: the whole chain, from the debug file
check_named() {
	local k n u
	read -r k n <<<"$(counts "$2" "$CHAIN")"
	read -r u n <<<"$(counts "$2" "$UNNAMED")"
	[ "$n" -ge 50 ] || fail "$1: $n samples (want >= 50)"
	[ $((100 * k)) -ge $((95 * n)) ] || fail "$1: $k of $n samples show main;fr_deep_a;fr_deep_b;fr_deep_c (want >= 95 %); stacks:
$(top "$2")
  stderr: $(head -c 300 "$3")"
	[ "$u" -eq 0 ] || fail "$1: $u samples still have an unnamed frame of the binary; stacks:
$(grep -E "$UNNAMED" "$2" | head -3 | cut -c1-300)"
	[ ! -s "$3" ] || fail "$1: frctl wrote on stderr: $(head -c 300 "$3")"
	ok "$1: $k of $n samples named main;fr_deep_a;fr_deep_b;fr_deep_c"
}

# --- as stored ---
read_bundle "$T/stored.folded" "$T/stored.err"
check_unnamed "as stored" "$T/stored.folded"
NSAMPLES=$(awk '{ t += $NF } END { print t + 0 }' "$T/stored.folded")

# --- a debug directory ---
read_bundle "$T/dir.folded" "$T/dir.err" --debug-dir "$T/debug"
check_named "--debug-dir" "$T/dir.folded" "$T/dir.err"
[ "$(awk '{ t += $NF } END { print t + 0 }' "$T/dir.folded")" -eq "$NSAMPLES" ] ||
	fail "--debug-dir: the sample count changed ($NSAMPLES as stored)"
"$FRCTL" dump --input "$T/late.frb" --pid "$P" --type sample --format json --debug-dir "$T/debug" >"$T/dir.json" ||
	fail "frctl dump --format json --debug-dir failed"
jq -e -s '[.[].stack[]? | select((.sym // "") | test("^fr_deep_b([+]|$)"))] as $b |
	($b | length) >= 50 and all($b[]; .inlined == true)' "$T/dir.json" >/dev/null ||
	fail "--debug-dir: json: want >= 50 fr_deep_b frames, all inlined: $(jq -c -s '[.[].stack[]? |
		select((.sym // "") | test("^fr_deep_b"))] | group_by(.inlined) | map({inlined: .[0].inlined, n: length})' "$T/dir.json")"
ok "--debug-dir: json fr_deep_b frames are inlined"
# report names them too (its hottest call paths), and only with the file
"$FRCTL" report --input "$T/late.frb" --debug-dir "$T/debug" >"$T/report.txt" 2>"$T/report.err" ||
	fail "frctl report --input --debug-dir failed: $(head -c 300 "$T/report.err")"
grep -q 'fr_deep_c' "$T/report.txt" || fail "report --debug-dir: no fr_deep_c in it: $(head -c 1500 "$T/report.txt")"
"$FRCTL" report --input "$T/late.frb" --debug-dir "$T/empty" >"$T/report0.txt" 2>&1 || fail "frctl report --input failed"
grep -q 'fr_deep_' "$T/report0.txt" && fail "report without the debug file names fr_deep_*"
ok "report: fr_deep_c named with --debug-dir, not without"

# --- a real debuginfod ---
cp "$DBG" "$T/srv/fr-deep-inline.debug"
# a free port: bound by the kernel's choice, then let go
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
URL="http://127.0.0.1:$PORT"
debuginfod -F -p "$PORT" -d "$T/debuginfod.sqlite" --disable-source-scan -t 0 -g 0 "$T/srv" \
	>"$T/debuginfod.log" 2>&1 &
SPID=$!
# indexed once debuginfod-find gets the file (a fresh cache each time: a
# "not found" is remembered for 10 minutes)
for i in $(seq 100); do
	kill -0 "$SPID" 2>/dev/null || fail "debuginfod exited: $(tail -5 "$T/debuginfod.log")"
	rm -rf "$T/probe-cache"
	DEBUGINFOD_URLS=$URL DEBUGINFOD_CACHE_PATH="$T/probe-cache" debuginfod-find debuginfo "$BID" >/dev/null 2>&1 && break
	[ "$i" -lt 100 ] || fail "debuginfod did not serve $BID within 20 s: $(tail -5 "$T/debuginfod.log")"
	sleep 0.2
done
ok "debuginfod (pid $SPID) serves $BID on $URL"

DEBUGINFOD_URLS=$URL DEBUGINFOD_CACHE_PATH="$T/cache" read_bundle "$T/srv.folded" "$T/srv.err"
check_named "DEBUGINFOD_URLS" "$T/srv.folded" "$T/srv.err"
[ -s "$T/cache/$BID/debuginfo" ] || fail "DEBUGINFOD_URLS: the debug file is not in libdebuginfod's cache ($T/cache/$BID)"
grep -q "GET /buildid/$BID/debuginfo 200" "$T/debuginfod.log" ||
	fail "DEBUGINFOD_URLS: the server's log has no request for $BID: $(tail -3 "$T/debuginfod.log")"

DEBUGINFOD_CACHE_PATH="$T/cache" read_bundle "$T/nourl.folded" "$T/nourl.err"
check_unnamed "the same without DEBUGINFOD_URLS" "$T/nourl.folded"
DEBUGINFOD_URLS=$URL DEBUGINFOD_CACHE_PATH="$T/cache" read_bundle "$T/nodi.folded" "$T/nodi.err" --no-debuginfod
check_unnamed "the same with --no-debuginfod" "$T/nodi.folded"

# check_down WHAT FOLDED ERR START_NS MIN_S MAX_S: unnamed, one warning,
# the read over in [MIN_S, MAX_S)
check_down() {
	local ms=$((($(date +%s%N) - $4) / 1000000)) lines
	check_unnamed "$1" "$2"
	lines=$(grep -c . "$3" || true)
	[ "$lines" -eq 1 ] && grep -q "^frctl: warning: debuginfod did not answer ($URL: .*); frames stay unnamed$" "$3" ||
		fail "$1: want exactly one warning line on stderr, got $lines: $(head -c 500 "$3")"
	[ "$ms" -ge $(($5 * 1000)) ] && [ "$ms" -lt $(($6 * 1000)) ] ||
		fail "$1: the read took $ms ms (want $5 s to $6 s)"
	ok "$1: $ms ms, one warning: $(cat "$3")"
}

# --- the server stopped: it takes the connection, never answers ---
kill -STOP "$SPID"
t0=$(date +%s%N)
DEBUGINFOD_URLS=$URL DEBUGINFOD_CACHE_PATH="$T/cache-stopped" DEBUGINFOD_TIMEOUT=2 \
	read_bundle "$T/stopped.folded" "$T/stopped.err"
check_down "server stopped, DEBUGINFOD_TIMEOUT=2" "$T/stopped.folded" "$T/stopped.err" "$t0" 2 5
grep -q "nothing within 2 s" "$T/stopped.err" || fail "server stopped: the warning does not say the wait: $(cat "$T/stopped.err")"
[ ! -e "$T/cache-stopped/$BID/debuginfo" ] ||
	fail "server stopped: libdebuginfod's cache says $BID was not found ($T/cache-stopped/$BID/debuginfo)"
t0=$(date +%s%N)
DEBUGINFOD_URLS=$URL DEBUGINFOD_CACHE_PATH="$T/cache-stopped2" read_bundle "$T/stopped2.folded" "$T/stopped2.err"
check_down "server stopped, default timeout" "$T/stopped2.folded" "$T/stopped2.err" "$t0" 10 13

# --- the server gone: connections refused ---
end_server
t0=$(date +%s%N)
DEBUGINFOD_URLS=$URL DEBUGINFOD_CACHE_PATH="$T/cache-gone" read_bundle "$T/gone.folded" "$T/gone.err"
check_down "server gone" "$T/gone.folded" "$T/gone.err" "$t0" 0 3
grep -q "Connection refused" "$T/gone.err" || fail "server gone: the warning does not say why: $(cat "$T/gone.err")"
