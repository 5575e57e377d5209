#!/bin/bash
# Off-CPU stacks: the stack a thread slept in and the one it entered the
# kernel from, on its offcpu record.  One private daemon, off-CPU threshold
# 5 ms, sampling off (the stacks must not depend on it):
#   - fr-wait (-O2, no frame pointers) blocked 1.5 s in read() on a pipe
#     inside main -> wait_for_input: its offcpu record (syscall read)
#     carries kernel frames through pipe_read and user frames, after the
#     kernel's, with wait_for_input called from main; text --stacks prints
#     them on lines under the record; the user stack was copied (status
#     offcpu_stacks.user_copied), at most 1 % lost to a full slot table (busy, counted);
#   - its forked child, gone at once after its own wait: named too (its
#     parent's mappings);
#   - fr-wait writing 256 MiB and calling fsync() on a disk file system:
#     an offcpu record inside fsync whose kernel frames are the file
#     system's sync path (do_fsync / *_sync_file) and user frames name
#     write_durably;
#   - --format folded --offcpu weights each stack by its blocked time:
#     the pipe wait's stack counts its duration_ns / 1000 (µs), the
#     samples are not in it;
#   - frctl report shows the pipe wait's stack under it among the longest
#     waits, and its call path among the off-CPU time by call path;
#   - kernel threads' records carry kernel frames and no user frames;
#   - with sources.sched.offcpu_stacks = false (reload) the next wait's
#     record has no stack.
# The user frames need BPF task work from the sched_switch tracepoint.  A
# kernel that has the kfunc may still refuse it there (a 6.18 build seen
# here does); the kernel is asked directly (task_work_here, lib.sh).
# Where it refuses, the records must
# fall back, and say so: the user frames are the innermost one (in the
# call's libc wrapper) and the "[user stack not captured]" marker, every
# such record is counted no_task_work, and the daemon says once why, with
# the verifier's reason; the checks that need the whole user stack are
# replaced by those.
BUILD=$1
HELPERS=$2
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"

# fsync needs a disk: /tmp may be a tmpfs elsewhere
DISK=$(mktemp -d /var/tmp/fr-test-fsync-XXXXXX)
offcpu_cleanup() {
	rm -rf "$DISK"
	cleanup
}
trap offcpu_cleanup EXIT

conf() {
	cat >"$T/fr.conf" <<CONF
store = { size = "64M"; segments = 4; sync_interval = "200ms"; };
sources = {
  sched = { offcpu_threshold = "5ms"; offcpu_stacks = $1; };
  sample = { enabled = false; };
};
CONF
}
TW=1
if ! task_work_here; then
	TW=0
	echo "# this kernel refuses BPF task work from sched_switch: $TW_REASON"
fi

conf true
start_daemon "$T/fr.conf"
if [ "$TW" = 0 ]; then
	[ "$(grep -c 'refuses it from the sched_switch tracepoint (its verifier: "[^"]' "$T/daemon.log")" = 1 ] ||
		fail "the daemon did not say once, with the verifier's reason, that task work is refused: $(cat "$T/daemon.log")"
	ok "the daemon says why the user stacks end at the innermost frame: $(grep -o 'its verifier: "[^"]*"' "$T/daemon.log")"
fi

status() { "$FRCTL" --config "$T/fr.conf" --store "$T/store" status --json; }
# offcpu_json PID JQ_SELECT: the offcpu records of PID (any thread) that
# match JQ_SELECT, as JSON lines; waits until there is one
offcpu_json() {
	wait_for_record "(.type == \"offcpu\" and .pid == $1 and ($2))"
	jq -c "select(.type == \"offcpu\" and .pid == $1 and ($2))" "$T/wait.json"
}
# the names of a record's frames, in order, one per line
names() { jq -r '.stack[] | .sym // ("@" + .addr)'; }

# --- a read blocked on a pipe ---
PID=$(cd "$T" && "$HELPERS/fr-wait" pipe 1500) || fail "fr-wait pipe failed"
REC=$(offcpu_json "$PID" '.tid == .pid and .syscall == "read"' | head -1)
[ -n "$REC" ] || fail "fr-wait's read has no offcpu record"
echo "$REC" | names >"$T/pipe.names"
KF=$(echo "$REC" | jq .kernel_frames)
DUR=$(echo "$REC" | jq .duration_ns)
[ "$DUR" -ge 1400000000 ] || fail "the pipe wait lasted $DUR ns, not ~1.5 s"
[ "$KF" -ge 2 ] || fail "the pipe wait has $KF kernel frames: $(tr '\n' ' ' <"$T/pipe.names")"
head -"$KF" "$T/pipe.names" | grep -q 'pipe_read+' ||
	fail "no kernel frame of the pipe wait is in pipe_read: $(tr '\n' ' ' <"$T/pipe.names")"
# user frames: after the kernel's, leaf first: wait_for_input, then main
tail -n +"$((KF + 1))" "$T/pipe.names" | sed 's/+0x[0-9a-f]*$//' >"$T/pipe.user"
if [ "$TW" = 1 ]; then
	awk '$0 == "wait_for_input" { w = NR } $0 == "main" { m = NR } END { exit !(w && m && w < m) }' "$T/pipe.user" ||
		fail "the pipe wait's user frames do not show main -> wait_for_input: $(tr '\n' ' ' <"$T/pipe.user")"
else
	# the innermost frame (read's libc wrapper) and the marker, no more
	[ "$(tr '\n' ' ' <"$T/pipe.user")" = "read [user stack not captured] " ] ||
		[ "$(tr '\n' ' ' <"$T/pipe.user")" = "__libc_read [user stack not captured] " ] ||
		fail "without task work the pipe wait's user frames are not read's and the marker: $(tr '\n' ' ' <"$T/pipe.user")"
fi
ok "read on a pipe: $(tr '\n' ' ' <"$T/pipe.names")"

# the same in text, under the record
"$FRCTL" --store "$T/store" dump --last 10m --pid "$PID" --type offcpu --stacks >"$T/pipe.txt" ||
	fail "dump --stacks failed"
UFRAME='^    wait_for_input\+0x[0-9a-f]* \(fr-wait\)$'
[ "$TW" = 1 ] || UFRAME='^    (__libc_)?read\+0x[0-9a-f]* \(libc\.so\.6\)$'
grep -A"$((KF + 2))" 'blocked in read()' "$T/pipe.txt" | grep -qE "$UFRAME" ||
	fail "dump --stacks does not print the user frame ($UFRAME) under the read: $(head -20 "$T/pipe.txt")"
"$FRCTL" --store "$T/store" dump --last 10m --pid "$PID" --type offcpu >"$T/pipe-nostack.txt"
grep -q '^    ' "$T/pipe-nostack.txt" && fail "dump without --stacks printed stack lines"
ok "dump --stacks prints the frames under the record"

# the child: slept 1.5 s, wrote, exited at once
CHILD=$(jq -r "select(.type == \"fork\" and .pid == $PID) | .child_pid" "$T/wait.json" | head -1)
[ -n "$CHILD" ] || fail "no fork record of fr-wait"
CREC=$(offcpu_json "$CHILD" '.syscall == "clock_nanosleep"' | head -1)
CFRAME='^main\+'
[ "$TW" = 1 ] || CFRAME='^(__)?(clock_nanosleep|nanosleep)'
echo "$CREC" | names | grep -qE "$CFRAME" ||
	fail "the child's wait does not name $CFRAME: $(echo "$CREC" | names | tr '\n' ' ')"
ok "its forked child, gone at once, is named: $(echo "$CREC" | names | tr '\n' ' ')"

# --- fsync of 256 MiB written to a disk ---
FPID=$(cd "$DISK" && "$HELPERS/fr-wait" fsync 256) || fail "fr-wait fsync failed"
FREC=$(offcpu_json "$FPID" '.syscall == "fsync"' | jq -s -c 'max_by(.duration_ns)')
echo "$FREC" | names >"$T/fsync.names"
FKF=$(echo "$FREC" | jq .kernel_frames)
head -"$FKF" "$T/fsync.names" | grep -qE '^(do_fsync|[a-z0-9]+_sync_file)\+' ||
	fail "the fsync wait's kernel frames are not the sync path: $(tr '\n' ' ' <"$T/fsync.names")"
FFRAME='^write_durably'
[ "$TW" = 1 ] || FFRAME='^(__libc_)?fsync'
tail -n +"$((FKF + 1))" "$T/fsync.names" | grep -qE "$FFRAME" ||
	fail "the fsync wait's user frames do not name $FFRAME: $(tr '\n' ' ' <"$T/fsync.names")"
ok "fsync ($(echo "$FREC" | jq .duration_ns) ns): $(tr '\n' ' ' <"$T/fsync.names")"

# --- the off-CPU flame graph: stacks by blocked time ---
"$FRCTL" --store "$T/store" dump --last 10m --format folded --offcpu >"$T/off.folded" ||
	fail "dump --format folded --offcpu failed"
WANT=$((DUR / 1000))
FOLD='^fr-wait;.*;main;wait_for_input;'
[ "$TW" = 1 ] || FOLD='^fr-wait;.*(__libc_)?read;.*pipe_read'
GOT=$(awk -v re="$FOLD" '$0 ~ re { s += $NF } END { print s + 0 }' "$T/off.folded")
[ "$GOT" -eq "$WANT" ] ||
	fail "the pipe wait's folded stack counts $GOT, not its blocked time $WANT µs: $(grep -E "$FOLD" "$T/off.folded")"
"$FRCTL" --store "$T/store" dump --last 10m --format folded >"$T/cpu.folded"
grep -qE 'wait_for_input|pipe_read' "$T/cpu.folded" && fail "the CPU folded output has the off-CPU stack"
"$FRCTL" --store "$T/store" dump --offcpu >/dev/null 2>&1 && fail "--offcpu without --format folded was accepted"
ok "folded --offcpu counts the pipe wait's stack $GOT µs"

# --- report: the longest waits with their stacks, time by call path ---
"$FRCTL" --store "$T/store" report --last 10m --comm fr-wait >"$T/report.txt" || fail "report failed"
RPATH='wait_for_input → (__libc_)?read'
[ "$TW" = 1 ] || RPATH='(__libc_)?read'
grep -A1 'fr-wait\['"$PID"'\] blocked in read() for' "$T/report.txt" | grep -qE "^ +[0-9]+ frames  .*$RPATH → .*pipe_read" ||
	fail "report does not show the pipe wait's stack under it: $(cat "$T/report.txt")"
sed -n '/^  off-CPU time by call path/,/^$/p' "$T/report.txt" | grep -qE "^ +[0-9.]+%  +1\.5[0-9]*s  fr-wait: .*$RPATH" ||
	fail "report's off-CPU time by call path lacks the pipe wait (1.5 s): $(cat "$T/report.txt")"
ok "report: the pipe wait's stack, and its 1.5 s call path"

# --- kernel threads: kernel frames only ---
jq -e -s '[.[] | select(.type == "offcpu" and .kernel_thread == true and (.stack | length) > 0)] |
	length > 0 and all(.kernel_frames == (.stack | length))' "$T/wait.json" >/dev/null ||
	fail "kernel threads' offcpu records are not kernel frames only"
ok "kernel threads: kernel frames only"

status >"$T/status.json"
# A wait whose CPU had all its copy slots in use keeps its kernel stack
# and is counted (busy): under a loaded machine (this test with others,
# 5 ms threshold) a few of hundreds; more than 1 % is slots held too long
# (without task work: none copied, every user thread's record counted)
WANTST='.offcpu_stacks.user_copied >= 3 and
	.offcpu_stacks.busy * 100 <= .offcpu_stacks.user_copied + .offcpu_stacks.busy and
	.offcpu_stacks.no_task_work == 0'
[ "$TW" = 1 ] || WANTST='.offcpu_stacks.user_copied == 0 and .offcpu_stacks.busy == 0 and .offcpu_stacks.no_task_work >= 3'
jq -e ".offcpu_stacks.enabled and $WANTST" "$T/status.json" >/dev/null ||
	fail "status offcpu_stacks: $(jq -c .offcpu_stacks "$T/status.json")"
ok "status: $(jq -c .offcpu_stacks "$T/status.json")"

# --- off by configuration ---
conf false
kill -HUP "$DPID"
for _ in $(seq 50); do
	status | jq -e '.offcpu_stacks.enabled == false' >/dev/null && break
	sleep 0.1
done
status | jq -e '.offcpu_stacks.enabled == false' >/dev/null || fail "reload did not turn offcpu_stacks off"
PID2=$(cd "$T" && "$HELPERS/fr-wait" pipe 300) || fail "fr-wait pipe failed"
REC2=$(offcpu_json "$PID2" '.tid == .pid and .syscall == "read"' | head -1)
[ "$(echo "$REC2" | jq '.stack | length')" -eq 0 ] ||
	fail "with offcpu_stacks = false the record still has a stack: $REC2"
ok "offcpu_stacks = false: no stack"
stop_daemon
