#!/bin/bash
# Names that do not depend on the process being alive (issue 43): stacks
# of processes that exit right after the record was taken are unwound and
# named from the mappings the daemon learned while they lived.
#  - 100 processes each wait ~1.5 s on a pipe (its writer sleeps 1.8 s) (over the shipped 1 s
#    off-CPU threshold) and exit the moment the wait ends: every offcpu
#    record has the whole user stack, read <- fr_wait <- main, named, and
#    all 100 are there, but for records the kernel dropped and counted
#    (before the mapping tracker, 2 to 3 runs in 12 kept one unnamed
#    frame and [truncated]).  Where the kernel refuses BPF task work from
#    sched_switch (task_work_here, lib.sh) the user stack is its innermost
#    frame: read, named all the same, and [user stack not captured];
#  - processes that live 20 ms, spinning, have every sample named from
#    main down.
# Usage: test-exited-names.sh BUILD_DIR
BUILD=$1
. "$(dirname "$0")/lib.sh"

cat >"$T/wait.c" <<'C'
#include <unistd.h>
__attribute__((noinline)) int fr_wait(int fd)
{
	char c;
	return (int)read(fd, &c, 1);
}
int main(void)
{
	int r = fr_wait(0);
	return r < 0; /* exits as soon as the wait ends */
}
C
cat >"$T/brief.c" <<'C'
#include <time.h>
static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}
__attribute__((noinline)) double fr_brief_spin(double secs)
{
	volatile double x = 0;
	double end = now() + secs;
	while (now() < end)
		for (int i = 0; i < 1000; i++)
			x += i;
	return x;
}
int main(void)
{
	double x = fr_brief_spin(0.020);
	return x < 0;
}
C
gcc -O2 -fomit-frame-pointer -o "$T/fr-wait" "$T/wait.c" || fail "gcc failed"
gcc -O2 -fomit-frame-pointer -o "$T/fr-brief" "$T/brief.c" || fail "gcc failed"

# the shipped off-CPU threshold and stacks; samples often enough that a
# 20 ms life is sampled
# (rings of 4 MiB: the ASan daemon, slow to drain them on a busy CI
# machine, lost 28 of the waits' records in 1 MiB ones; and the parser
# given 75 % of each second: the ASan helper, on a busy machine, left 96
# of 100 waits over the shipped 25 %.  What is checked here is names, not
# the budget)
cat >"$T/fr.conf" <<CONF
store = { size = "64M"; segments = 4; sync_interval = "200ms"; };
recorder = { ring_size = "4M"; };
sources = { sample = { hz = 499; parse_cpu = 75; parse_timeout = "2s"; }; };
CONF
WANT='read fr_wait main __libc_start_call_main __libc_start_main _start'
task_work_here || WANT='read [user stack not captured]'
start_daemon "$T/fr.conf"

# 4 rounds of 25 waiters: each holds the read end of its own pipe, whose
# writer sleeps 1.5 s and writes one byte
for round in 1 2 3 4; do
	pids=()
	for i in $(seq 25); do
		(sleep 1.8; echo x) | "$T/fr-wait" &
		pids+=($!)
	done
	wait "${pids[@]}"
done
for i in $(seq 40); do
	"$T/fr-brief"
done
# the last waits' records are in the store once their stacks are unwound
# and their chunk is written: seconds under ASan, whose helper is slow
# (until all 100 are there, or no more came in 3 dumps: one lost, the
# ASan dumps of a busy machine took 9 s each, and 30 of them the test's
# whole time)
n=0 same=0
for _ in $(seq 30); do
	sleep 1
	"$FRCTL" --store "$T/store" dump --last 2m --format json >"$T/all.json"
	# user frames of each record, offsets cut: "read fr_wait main __libc_start_call_main ..."
	jq -r 'select(.comm == "fr-wait" and .type == "offcpu") |
		[.stack[.kernel_frames:][] | (.sym // "?") | sub("\\+0x[0-9a-f]+$"; "")] | join(" ")' "$T/all.json" >"$T/waits"
	last=$n
	n=$(wc -l <"$T/waits")
	[ "$n" -lt 100 ] || break
	if [ "$n" -eq "$last" ] && [ "$n" -gt 0 ]; then
		same=$((same + 1))
		[ "$same" -lt 3 ] || break
	else
		same=0
	fi
done
# A record the kernel could not put in its ring (the ASan daemon, slow
# to drain it while it unwinds, fell behind 499 samples a second) is
# dropped there and counted: a loss the dumps show, not a name lost.
# Every record missing must be counted so, and most must be here.
"$FRCTL" --store "$T/store" status --json >"$T/st.json"
# A wait whose record never came is also counted where its waker was
# held for it (wakers.orphaned: seen once in two ASan runs, with no drop
# counted by the sched source; see issue 49's note)
sched_dropped=$(jq '.sources.sched.dropped // 0' "$T/st.json")
orphaned=$(jq '.wakers.orphaned // 0' "$T/st.json")
[ "$n" -ge 75 ] || fail "only $n offcpu records of fr-wait within 30 s (want 100; sched records dropped: $sched_dropped)"
[ $((100 - n)) -le $((sched_dropped + orphaned)) ] ||
	fail "$((100 - n)) offcpu records of fr-wait missing, but the sched source counts $sched_dropped dropped and $orphaned wakers orphaned (wakers: $(jq -c '.wakers' "$T/st.json"); offcpu stacks: $(jq -c '.offcpu_stacks' "$T/st.json"); per CPU: $(jq -c '.per_cpu' "$T/st.json"))"
[ "$n" -eq 100 ] || echo "note: $((100 - n)) of 100 waits' records lost (counted: $sched_dropped dropped in the kernel, $orphaned wakers orphaned)"
good=$(grep -cxF "$WANT" "$T/waits" || true)
# A stack the daemon did not give its parser, which was past its time
# budget (250 ms a second: a slow machine, the ASan helper), is its
# interrupted instruction and [unwind failed]: a loss counted as such
# (parser over_budget and skipped), not a name lost to the exit; at most
# that many, here and in the samples below (a broken tracker also gives
# [unwind failed], with nothing counted).  That one frame is named when
# the chunk has its function's name from another stack of the process
# ("fr_brief_spin [unwind failed]"), "?" when not.
notunwound='^[^ ]+ \[unwind failed\]$'
unwound_not=$(jq '.sampler.parser | (.over_budget // 0) + (.skipped // 0)' "$T/st.json")
wait_budget=$(grep -cE "$notunwound" "$T/waits" || true)
[ "$wait_budget" -le "$unwound_not" ] || wait_budget=0
[ "$wait_budget" -eq 0 ] || echo "note: $wait_budget waits not unwound: the parser was over its time budget ($unwound_not stacks counted)"
if [ $((good + wait_budget)) -ne "$n" ]; then
	# what a failure needs to be understood, in the last line of a log
	# cut to its tail: the records themselves and the counters of what
	# unwinds and names them
	bad=$(jq -c 'select(.comm == "fr-wait" and .type == "offcpu") |
		select([.stack[.kernel_frames:][] | (.sym // "?") | sub("\\+0x[0-9a-f]+$"; "")] | join(" ") != $want) |
		{ts, pid, kernel_frames, user: .stack[.kernel_frames:]}' --arg want "$WANT" "$T/all.json" | head -3)
	fail "$good of $n waits named $WANT; others: $(grep -vxF "$WANT" "$T/waits" | sort | uniq -c | head -5); records: $bad; counters: $(jq -c '.sampler | {unwind, parser, mappings}' "$T/st.json")"
fi
# The plain build, whose daemon keeps up, keeps the issue's bar whole:
# nothing dropped, and every record there named (the allowances above are
# for the sanitized daemon, several times slower).  A wait whose record
# never came, its waker orphaned, is not a name lost but the lost off-CPU
# wait (wait-kinds, python (b)): counted, rare, its cause not found yet;
# CI's plain phase met it here once (2026-12-06, 99 of 100, 1 orphaned)
if [ -z "${ASAN_OPTIONS:-}" ] && { [ "$sched_dropped" -ne 0 ] || [ "$good" -ne "$n" ] || [ $((100 - n)) -gt "$orphaned" ]; }; then
	fail "$good of 100 waits named, $n records (plain build: every record named, and none missing but for orphaned wakers; sched dropped $sched_dropped, wakers orphaned $orphaned, parser not given $unwound_not)"
fi
ok "$good of $n waits of processes that exited at once named: $WANT"

# (an unnamed frame as ?MODULE).  A sample in the kernel in the middle of
# the exec (past the point of no return: the comm and memory are the new
# program's, the user registers still the shell's until the new entry
# point is set) has the shell's execve site for its one user frame, in no
# mapping of the new program: "? [truncated]", marked "(in exec)" when the
# kernel stack says so.  The kernel stack of a sample taken in the kernel
# can be missing (bpf_get_stack's per-CPU buffers in use by the program
# the sample interrupted: one sample in a CI run of the ASan pass): such a sample looks like one in user code, "(no kernel stack)"
# here, and is counted (sampler.kernel_stacks_unread)
jq -r 'select(.comm == "fr-brief" and .type == "sample") |
	([.stack[.kernel_frames:][] | (.sym // ("?" + (.module // "" | split("/") | last))) | sub("\\+0x[0-9a-f]+$"; "")] |
	 join(" ")) as $u |
	if $u == "? [truncated]" and any(.stack[:.kernel_frames][]; (.sym // "") | test("^(load_elf_binary|bprm_execve|begin_new_exec|exec_binprm)[+]"))
	then $u + " (in exec)" elif $u == "? [truncated]" and .kernel_frames == 0 then $u + " (no kernel stack)" else $u end' "$T/all.json" >"$T/briefs"
n=$(wc -l <"$T/briefs")
[ "$n" -ge 40 ] || fail "only $n samples of 40 processes living 20 ms"
good=$(grep -cE '(^| )fr_brief_spin main __libc_start_call_main __libc_start_main _start$' "$T/briefs" || true)
# the first instants of a process are in the loader: ld.so relocating
# itself (_dl_start) or running the libraries' initializers (_dl_init),
# called from its entry point, which has no name and no unwind entry
# (and is the outermost frame); samples in the kernel during its exec or
# exit have no user stack at all.  A sample in the vDSO (clock_gettime) of
# a process already gone stops there: the tracker learns files, and the
# vDSO is none (its image would have to come from the daemon's own).
ldso='\?ld-linux-x86-64\.so\.2 \[(no unwind info|truncated)\]$'
other=$(grep -vE '(^| )fr_brief_spin main __libc_start_call_main __libc_start_main _start$' "$T/briefs" |
	grep -vE "^\$|(^| )_start\$|(^| )_dl_[a-z]+ $ldso|^$ldso|^\?\[vdso\] \[truncated\]\$|^\? \[truncated\] \(in exec\)\$" || true)
# A sample in a PLT stub (clock_gettime@plt: no symbol) can come back as
# that one unnamed frame; a few of them are no loss of names
plt=$(grep -cx '?fr-brief' <<<"$other" || true)
other=$(grep -vx '?fr-brief' <<<"$other" || true)
# (stacks not given to the parser, as above: at most as many as it counts)
st=$("$FRCTL" --store "$T/store" status --json)
nokstack=$(grep -cx '? \[truncated\] (no kernel stack)' <<<"$other" || true)
unread=$(jq '.sampler.kernel_stacks_unread' <<<"$st")
# and such samples are rare: a sampler that reads user_mode wrongly again
# (777 of a run's samples, before 9911f72) would excuse as many here
[ $((unread * 100)) -le "$(jq '.sources.sample.records' <<<"$st")" ] ||
	fail "$unread samples in the kernel without a kernel stack, over 1 % of the $(jq '.sources.sample.records' <<<"$st") samples: is user_mode read right (bpf/profile.bpf.c)?"
# (the sanitized daemon: one such sample in user mode, its instruction in
# no mapping the tracker held, in 2 of ~5 CI runs of the ASan pass, 0 of
# the plain pass and of 12 runs here; cause not found, see issue 43's
# note.  At most 1 in 100, and only there)
unexplained=0
if [ -n "${ASAN_OPTIONS:-}" ] && [ "$nokstack" -gt "$unread" ] && [ $(((nokstack - unread) * 100)) -le "$n" ]; then
	unexplained=$((nokstack - unread))
	echo "note: $unexplained samples of fr-brief in user mode, one unnamed frame (sanitized daemon; at most 1 in 100 allowed)"
fi
[ "$nokstack" -le $((unread + unexplained)) ] ||
	fail "$nokstack samples of fr-brief with no kernel stack and their user stack unnamed, but the daemon counts only $unread samples taken in the kernel without a kernel stack"
other=$(grep -vx '? \[truncated\] (no kernel stack)' <<<"$other" || true)
[ "$nokstack" -eq 0 ] || echo "note: $nokstack samples of fr-brief in the kernel with no kernel stack ($unread counted in all)"
unwound_not=$(jq '.sampler.parser | (.over_budget // 0) + (.skipped // 0)' <<<"$st")
budget=$(grep -cE "$notunwound" <<<"$other" || true)
[ "$budget" -le "$unwound_not" ] ||
	fail "$budget samples of fr-brief not unwound, but the parser counts only $unwound_not stacks it was not given ($(jq -c '.sampler.parser' <<<"$st"))"
other=$(grep -vE "$notunwound" <<<"$other" || true)
[ "$budget" -eq 0 ] || echo "note: $budget samples of fr-brief not unwound: the parser was over its time budget ($unwound_not stacks counted)"
[ $((plt * 50)) -le "$n" ] || fail "$plt of $n samples of fr-brief are one unnamed frame"
[ -z "$other" ] || fail "samples of fr-brief not named to _start: $(sort <<<"$other" | uniq -c | sort -rn | head -5); kernel tops of one-frame ones: $(jq -c 'select(.comm == "fr-brief" and .type == "sample" and (.stack | length) - .kernel_frames <= 2) | [.stack[:.kernel_frames][:5][] | .sym]' "$T/all.json" | head -3)"
[ $((good * 10)) -ge $(((n - budget) * 8)) ] || fail "only $good of $((n - budget)) samples of fr-brief unwound in fr_brief_spin <- main"
ok "$n samples of 40 processes living 20 ms: $good in fr_brief_spin <- main <- ... _start, the rest whole in the loader or counted as not unwound ($budget)"
st=$("$FRCTL" --store "$T/store" status --json)
ok "mappings: $(jq -c '.sampler.mappings' <<<"$st"); samples in the kernel without a kernel stack: $(jq '.sampler.kernel_stacks_unread' <<<"$st")"
# the parser's helper, busy all along, is not sampled (each of its samples
# was another stack for it: 4,000 a run of the ASan pass), nor are its
# waits recorded; a few before the daemon's first tick after its start
helper=$(jq -r 'select(.comm == "flightrec-parse" and (.type == "sample" or .type == "offcpu")) | .type' "$T/all.json" | wc -l)
[ "$helper" -le 5 ] || fail "$helper samples and waits of flightrec-parse recorded (its own are not to be): $(jq -c 'select(.comm == "flightrec-parse" and (.type == "sample" or .type == "offcpu")) | [.type, .pid, .tid, .ts]' "$T/all.json" | sort | uniq -c | head -8 | tr "\n" " "); parser: $(jq -c '.sampler.parser | {pid, starts}' <<<"$st")"
ok "flightrec-parse: $helper of its samples and waits recorded"
stop_daemon
echo "exited-names: all checks passed"
