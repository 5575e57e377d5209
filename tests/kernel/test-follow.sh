#!/bin/bash
# frctl dump -f on a real recording, with the default settings:
#   - a program run after the follower started reaches its JSON output
#     within 2 s (from just before the exec to the line arriving; the
#     latencies are printed), and its text output;
#   - it keeps following when flightrecd is stopped (SIGTERM) and started
#     again on the same store: the second exec appears too, once, and
#     stderr says the daemon stopped and restarted, while stdout stays
#     JSON Lines;
#   - SIGINT and SIGTERM end it with status 0 (under ASan, with nothing
#     leaked);
#   - a chunk half written at the end of the store is not printed, nor
#     said to be damaged, until it is whole;
#   - `frctl dump -f | head -1` ends, status 0, nothing on stderr;
#   - --format perfetto with -f is refused with one line;
#   - on a store with no chunk yet, it waits for the first;
#   - on a 1 MiB store whose ring wraps many times under an exec storm, it
#     prints every marker exec'd meanwhile, once and in order, unless it
#     says records were lost; stopped (SIGSTOP) while the ring wraps past
#     it, it says how many segments it lost, then goes on.
BUILD=$1
HELPERS=$2
. "$(dirname "$0")/lib.sh"

FOLLOWERS=()
STORM_PID=
end_all() {
	local p
	for p in "${FOLLOWERS[@]}" $STORM_PID; do
		kill -CONT "$p" 2>/dev/null || true
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	cleanup
}
trap end_all EXIT

# the daemon's defaults (chunk_age 1s, drain_interval 100ms,
# sync_interval 1s): the 2 s bound is theirs; frctl reads the same file
# for how long the daemon takes to store a record
echo '# defaults' >"$T/fr.conf"
NAME=frfollow
cp /bin/true "$T/$NAME"
start_daemon "$T/fr.conf"

# follow FORMAT OUT ARGS...: a follower whose output lines are stamped
# with the time they arrived ($T/OUT.out: "SECONDS.MICROS LINE") and
# whose stderr is $T/OUT.err; its pid in FP
follow() {
	local fmt=$1 out=$2
	shift 2
	mkfifo "$T/$out.fifo"
	"$FRCTL" --config "$T/fr.conf" --store "$T/store" dump -f --format "$fmt" "$@" >"$T/$out.fifo" 2>"$T/$out.err" &
	FP=$!
	while IFS= read -r line; do
		printf '%s %s\n' "$EPOCHREALTIME" "$line"
	done <"$T/$out.fifo" >"$T/$out.out" &
	FOLLOWERS+=("$FP" "$!")
}

# wait_line FILE STRING: prints the first line of FILE holding STRING,
# waiting up to 10 s for it
wait_line() {
	local deadline=$((SECONDS + 10))
	while [ "$SECONDS" -lt "$deadline" ]; do
		grep -F -m1 -- "$2" "$1" && return 0
		sleep 0.02
	done
	return 1
}

# end_follower PID [SIGNAL]: SIGINT (or SIGNAL); it must exit 0
end_follower() {
	local rc=0
	kill "-${2:-INT}" "$1"
	wait "$1" || rc=$?
	[ "$rc" -eq 0 ] || fail "frctl dump -f exited $rc on SIG${2:-INT} (stderr: $(cat "$T"/*.err))"
}

follow json j --comm "$NAME"
JP=$FP
follow text t --comm "$NAME"
TP=$FP
sleep 1.5

# 1. a fresh exec, within 2 s, three times
for i in 1 2 3; do
	t0=$EPOCHREALTIME
	"$T/$NAME" "one-$i-$$"
	line=$(wait_line "$T/j.out" "\"one-$i-$$\"") || fail "exec one-$i did not reach the JSON output within 10 s"
	lat=$(awk -v a="$t0" -v b="${line%% *}" 'BEGIN { printf "%.3f", b - a }')
	echo "latency from exec to its JSON line: $lat s"
	awk -v l="$lat" 'BEGIN { exit !(l <= 2.0) }' || fail "exec one-$i took $lat s to reach the output (bound: 2 s)"
	sleep 0.$((RANDOM % 8 + 2))
done
ok "each exec reached frctl dump -f --format json within 2 s"
wait_line "$T/t.out" "one-3-$$" >/dev/null || fail "the text follower did not print exec one-3"
grep -E "^[0-9.]+ [0-9-]+ [0-9:.]+ cpu[0-9]+ +exec +$NAME\[[0-9]+\] .*one-1-$$" "$T/t.out" >/dev/null ||
	fail "no text line for exec one-1: $(head -3 "$T/t.out")"
ok "... and the text follower printed its lines"

# 2. the daemon stopped and started again on the same store
OLD=$DPID
stop_daemon
start_daemon "$T/fr.conf"
"$T/$NAME" "two-$$"
wait_line "$T/j.out" "\"two-$$\"" >/dev/null || fail "exec after the restart did not reach the JSON follower"
wait_line "$T/t.out" "two-$$" >/dev/null || fail "exec after the restart did not reach the text follower"
for f in j t; do
	grep -qx -- "-- flightrecd stopped (pid $OLD) --" "$T/$f.err" || fail "$f: no stop notice: $(cat "$T/$f.err")"
	grep -qx -- "-- flightrecd restarted (pid $DPID) --" "$T/$f.err" || fail "$f: no restart notice: $(cat "$T/$f.err")"
done
ok "followed across a restart of flightrecd, and said so on stderr: $(tr '\n' ' ' <"$T/j.err")"

# 3. SIGINT, SIGTERM
sleep 1.5 # the exit records, stored after the exec lines
end_follower "$JP"
end_follower "$TP" TERM
cut -d' ' -f2- "$T/j.out" >"$T/j.json"
jq -e -s 'length > 0' "$T/j.json" >/dev/null || fail "the JSON follower's output is not JSON Lines: $(head -3 "$T/j.json")"
jq -e -s --arg n "$NAME" 'all(.[]; .comm == $n or .type == "gap")' "$T/j.json" >/dev/null || fail "--comm did not filter"
for tag in one-1 one-2 one-3 two; do
	n=$(jq -s --arg a "$tag-$$" '[.[] | select(.type == "exec" and .argv[1] == $a)] | length' "$T/j.json")
	[ "$n" -eq 1 ] || fail "exec $tag printed $n times"
	jq -e -s --arg a "$tag-$$" --arg x "$T/$NAME" \
		'[.[] | select(.type == "exec" and .argv[1] == $a)][0] as $e |
		 any(.[]; .type == "exit" and .pid == $e.pid and .exe == $x)' "$T/j.json" >/dev/null ||
		fail "no exit record naming the executable of exec $tag"
done
jq -e -s 'map(.time) == (map(.time) | sort)' "$T/j.json" >/dev/null || fail "records out of time order"
ok "SIGINT, SIGTERM: exit 0; stdout was JSON Lines, each exec once, in time order, exits named by their executable"

# 3b. a chunk being written is not read, nor said to be damaged, until
# it is whole: with the daemon stopped, a copy of a chunk of the newest
# segment (renumbered as the next chunk) is appended in two halves
stop_daemon
follow json c --last 2m
CP=$FP
python3 - "$T/store/segments" "$T/chunk.bin" >"$T/chunk.seg" <<'PY' || fail "no chunk to copy"
import os, struct, sys, zlib
segs = []
for name in os.listdir(sys.argv[1]):
    path = os.path.join(sys.argv[1], name)
    with open(path, "rb") as f:
        h = f.read(64)
    if len(h) == 64 and h[:8] == b"FRECSEG\0":
        segs.append((struct.unpack_from("<Q", h, 24)[0], path))
seq, path = max(segs)
data = open(path, "rb").read()
off, chunks = 64, []
while off + 128 <= len(data) and data[off:off + 8] == b"FRECCHK\0":
    cpu, nev = struct.unpack_from("<I", data, off + 24)[0], struct.unpack_from("<I", data, off + 100)[0]
    size = (128 + struct.unpack_from("<I", data, off + 92)[0] + 7) & ~7
    chunks.append((nev if cpu != 0xFFFFFFFF else 0, off, size))
    off += size
assert off == len(data), "the newest segment does not end with a whole chunk"
nev, at, size = max(chunks)
assert nev > 0
c = bytearray(data[at:at + size])
struct.pack_into("<Q", c, 80, (seq << 32) | len(chunks))
struct.pack_into("<I", c, 124, zlib.crc32(bytes(c[:124])))
open(sys.argv[2], "wb").write(c)
print(path)
PY
SEG=$(cat "$T/chunk.seg")
SIZE=$(stat -c %s "$T/chunk.bin")
# the window printed (and stamped) whole: no new line for a second
n1=-1
deadline=$((SECONDS + 30))
while [ "$(wc -l <"$T/c.out")" -ne "$n1" ]; do
	[ "$SECONDS" -lt "$deadline" ] || fail "the follower kept printing the last 2 minutes for 30 s"
	n1=$(wc -l <"$T/c.out")
	sleep 1
done
[ "$n1" -gt 0 ] || fail "the follower printed nothing of the last 2 minutes"
head -c $((SIZE / 2)) "$T/chunk.bin" >>"$SEG"
sleep 1.5
[ "$(wc -l <"$T/c.out")" -eq "$n1" ] || fail "a half-written chunk was printed"
[ ! -s "$T/c.err" ] || fail "a half-written chunk: $(cat "$T/c.err")"
tail -c +$((SIZE / 2 + 1)) "$T/chunk.bin" >>"$SEG"
deadline=$((SECONDS + 5))
while [ "$(wc -l <"$T/c.out")" -eq "$n1" ]; do
	[ "$SECONDS" -lt "$deadline" ] || fail "the chunk, once whole, was not printed"
	sleep 0.1
done
sleep 0.5
# (the copy may hold the daemon's start mark: its notice is no damage)
! grep -v '^-- flightrecd ' "$T/c.err" || fail "the chunk, once whole: $(cat "$T/c.err")"
end_follower "$CP"
ok "a chunk half written was not printed nor said damaged; once whole, its $(($(wc -l <"$T/c.out") - n1)) records were"
start_daemon "$T/fr.conf"

# 4. | head -1, and what -f refuses
rc=0
timeout -s KILL 30 bash -c '"$1" --config "$2/fr.conf" --store "$2/store" dump -f 2>"$2/head.err" | head -1 >"$2/head.out";
	exit "${PIPESTATUS[0]}"' - "$FRCTL" "$T" || rc=$?
[ "$rc" -eq 0 ] || fail "frctl dump -f | head -1: frctl exited $rc (137: did not end)"
[ "$(wc -l <"$T/head.out")" -eq 1 ] || fail "head -1 got no line"
[ ! -s "$T/head.err" ] || fail "frctl dump -f | head -1 wrote on stderr: $(cat "$T/head.err")"
ok "frctl dump -f | head -1 ended, status 0, nothing on stderr"
rc=0
"$FRCTL" --store "$T/store" dump -f --format perfetto >/dev/null 2>"$T/refused.err" || rc=$?
[ "$rc" -eq 2 ] && [ "$(wc -l <"$T/refused.err")" -eq 1 ] ||
	fail "dump -f --format perfetto: exit $rc, $(cat "$T/refused.err")"
ok "dump -f --format perfetto refused: $(cat "$T/refused.err")"

# 5. a ring that wraps: 4 segments of 256 KiB, under an exec storm
stop_daemon
rm -rf "$T/store"
cat >"$T/fr.conf" <<CONF
store = { size = "1M"; segments = 4; sync_interval = "100ms"; };
recorder = { chunk_size = "16K"; };
CONF
start_daemon "$T/fr.conf"
follow json w --comm "$NAME"
WP=$FP
sleep 1
"$HELPERS/fr-exec-storm" 100000000 &
STORM_PID=$!
# bytes_written: what the daemon wrote into the store since it started
written() {
	"$FRCTL" --store "$T/store" status --json | jq -e .store.bytes_written || fail "frctl status failed"
}
i=0
deadline=$((SECONDS + 60))
while :; do
	i=$((i + 1))
	"$T/$NAME" "w-$i-$$"
	sleep 0.1
	written=$(written)
	[ "$i" -ge 20 ] && [ "$written" -ge $((4 << 20)) ] && break
	[ "$SECONDS" -lt "$deadline" ] || fail "only $written bytes written into the 1 MiB store in 60 s"
done
sleep 2
MARKERS=$i
wait_line "$T/w.out" "\"w-$MARKERS-$$\"" >/dev/null || fail "the last marker did not reach the follower"
# the markers printed, by number, in the order printed
cut -d' ' -f2- "$T/w.out" | jq -r --arg s "-$$" 'select(.type == "exec") | (.argv[1] // "") | select(startswith("w-"))' |
	sed 's/^w-\([0-9]*\)-.*/\1/' >"$T/w.seen"
seen=$(wc -l <"$T/w.seen")
sort -n -c "$T/w.seen" 2>/dev/null || fail "markers out of order: $(tr '\n' ' ' <"$T/w.seen")"
[ "$(sort -n -u "$T/w.seen" | wc -l)" -eq "$seen" ] || fail "markers printed twice: $(tr '\n' ' ' <"$T/w.seen")"
if [ "$seen" -ne "$MARKERS" ]; then
	grep -q "fell behind" "$T/w.err" || cut -d' ' -f2- "$T/w.out" | jq -e -s 'any(.[]; .type == "gap")' >/dev/null ||
		fail "$((MARKERS - seen)) of $MARKERS markers missing, and no loss said: $(tr '\n' ' ' <"$T/w.seen")"
	echo "note: $((MARKERS - seen)) of $MARKERS markers lost, and said so: $(cat "$T/w.err")"
fi
ok "the ring wrapped $((written >> 20)) times over: $seen of $MARKERS markers exec'd meanwhile printed, once each, in order"

# stopped while the ring goes round past it
kill -STOP "$WP"
before=$(written)
deadline=$((SECONDS + 60))
while :; do
	w=$(written)
	[ "$w" -ge $((before + (3 << 20))) ] && break
	[ "$SECONDS" -lt "$deadline" ] || fail "the storm wrote only $((w - before)) bytes in 60 s"
	sleep 0.2
done
kill "$STORM_PID"
wait "$STORM_PID" 2>/dev/null || true
STORM_PID=
"$T/$NAME" "after-$$"
kill -CONT "$WP"
wait_line "$T/w.out" "\"after-$$\"" >/dev/null || fail "after falling behind, the follower did not go on"
lost=$(grep -m1 "fell behind" "$T/w.err") || fail "fell behind silently: $(cat "$T/w.err")"
[[ "$lost" =~ ^frctl:\ fell\ behind:\ ([0-9]+)\ segments?\  ]] && [ "${BASH_REMATCH[1]}" -ge 1 ] ||
	fail "no count of what was lost: $lost"
ok "stopped while the ring wrapped, it said so and went on: $lost"
hwm=$(awk '/VmHWM/ { print $2 }' "/proc/$WP/status")
echo "the follower's peak RSS: $hwm kB"
[ "$hwm" -lt $((512 << 10)) ] || fail "the follower's peak RSS is $hwm kB"
end_follower "$WP"
stop_daemon

# 6. a store with no chunk yet (chunks written every 30 s): the follower
# waits for the first (it took an empty list of chunks for an error of
# its own before: UBSan stopped it, as it did CI's run when a follower
# started before the daemon's first chunk)
rm -rf "$T/store"
printf 'recorder = { chunk_age = "30s"; };\n' >"$T/fr-empty.conf"
start_daemon "$T/fr-empty.conf"
"$FRCTL" --config "$T/fr-empty.conf" --store "$T/store" dump -f >"$T/e.out" 2>"$T/e.err" &
EP=$!
FOLLOWERS+=("$EP")
sleep 1.5
kill -0 "$EP" 2>/dev/null || fail "a follower of a store without chunks exited: $(cat "$T/e.err")"
end_follower "$EP"
ok "a store without chunks yet: the follower waits for them"
stop_daemon
