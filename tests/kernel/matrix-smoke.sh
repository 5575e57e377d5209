#!/bin/bash
# The kernel matrix's guest side (tests/tools/kernel-matrix.sh boots it):
# the real daemon from the build directory with the shipped configuration
# (conf/flightrec.conf) on a tmpfs store, under real workloads, on whatever
# kernel runs it.  Every check adds one line to RESULTS/result, "ok ..."
# or "FAIL ..."; a failed check does not stop the others.
#   sources   every source the shipped configuration enables attached
#             (status, and no "Failed to start source" in the log); then
#             the ones it leaves off (syscall, sched full mode) too, in
#             a second run with them on
#   records   exec, fork, exit, offcpu, signal, oom, tcp, sample, metrics
#   sample    fr-spin's samples have named user stacks (fr_spin_*, main)
#   python    python3.11's samples have its Python frames (the BPF walk
#             of bpf/python.bpf.h loads and reads on this kernel)
#   crash     fr-segv's SIGSEGV gives a crash incident naming its exe
#             (fr-segv exec'd by sh in place: not /usr/bin/dash)
#   oom       a real OOM kill in a cgroup2 memory cgroup (memory.max):
#             an oom record and an incident
# Also runs on the host (RESULTS: any writable directory), as a check of
# the checks.
# Usage: matrix-smoke.sh BUILD_DIR SOURCE_DIR RESULTS_DIR
BUILD=$1
SRC=$2
RES=$3
HELPERS=$BUILD/tests/helpers
. "$SRC/tests/kernel/lib.sh"
set +e
: >"$RES/result"
MEMCG=

teardown() {
	[ -n "$MEMCG" ] && rmdir "$MEMCG" 2>/dev/null
	cp "$T/daemon.log" "$RES/daemon.log" 2>/dev/null
	cp "$T/status.json" "$RES/status.json" 2>/dev/null
	cleanup
}
trap teardown EXIT

# check JQ_EXPR FILE WHAT: one result line
check() {
	if jq -e -s "$1" "$2" >/dev/null 2>&1; then
		echo "ok $3" | tee -a "$RES/result"
	else
		echo "FAIL $3" | tee -a "$RES/result"
	fi
}
note() { echo "FAIL $*" | tee -a "$RES/result"; }
t_begin=$SECONDS
stamp() { echo "[$((SECONDS - t_begin)) s] $*"; }

echo "kernel $(uname -r), $(nproc) CPUs"
ip link set lo up 2>/dev/null

mkdir -p "$T/store"
# The shipped configuration, but for the parser's timeout: under TCG
# every instruction is emulated, and the first stacks of a process (its
# libraries' tables parsed) took 223 ms here and over 500 ms on a busier
# host, whose helper was then killed 5 times and not started again for a
# minute.  The timeout guards the daemon's loop on real hardware, not a
# kernel's features.  (parse_cpu stays: raised to 60 %, the drain fell so
# far behind on a loaded host that the ring dropped fr-segv's signal.)
sed -e 's/^    parse_timeout = "500ms";$/    parse_timeout = "10s";/' "$SRC/conf/flightrec.conf" >"$T/shipped.conf"
grep -q 'parse_timeout = "10s";' "$T/shipped.conf" ||
	note "parser: could not raise its timeout in a copy of the shipped configuration"
start_daemon "$T/shipped.conf"
stamp "flightrecd answers"

# workloads: CPU, a long wait, a crash, a reset, an OOM kill
"$HELPERS/fr-spin" 3 >"$T/spin.pid" &
SPIN_JOB=$!
PY_JOB=
if [ -x /usr/bin/python3.11 ]; then
	/usr/bin/python3.11 "$SRC/tests/kernel/py-work.py" hot 3 &
	PY_JOB=$!
fi
"$HELPERS/fr-wait" pipe 1500 >"$T/wait.pid" &
WAIT_JOB=$!
ulimit -c 0
# exec'd by sh (dash on Debian) in its own process, as a service's
# wrapper does: the exec record and the signal race to the daemon, and the
# trigger must name fr-segv, not the shell (seen once on 6.1)
SEGV=$(sh -c 'exec "$1"' sh "$HELPERS/fr-segv" 2>/dev/null)
(exec 3<>/dev/tcp/127.0.0.1/1) 2>/dev/null
# the memory controller where this machine has it: cgroup2 (the guest
# mounts only that; memory.max) or v1 (memory.limit_in_bytes)
CG2=
for d in /sys/fs/cgroup /sys/fs/cgroup/unified; do
	if [ "$(stat -f -c %T "$d" 2>/dev/null)" = cgroup2fs ] && grep -qw memory "$d/cgroup.controllers"; then
		CG2=$d
		break
	fi
done
if [ -n "$CG2" ] && echo +memory >"$CG2/cgroup.subtree_control"; then
	MEMCG=$CG2/fr-matrix-oom
	mkdir "$MEMCG" && echo $((32 << 20)) >"$MEMCG/memory.max"
	echo 0 >"$MEMCG/memory.swap.max" 2>/dev/null
elif [ "$(stat -f -c %T /sys/fs/cgroup/memory 2>/dev/null)" = cgroupfs ]; then
	MEMCG=/sys/fs/cgroup/memory/fr-matrix-oom
	mkdir "$MEMCG" && echo $((32 << 20)) >"$MEMCG/memory.limit_in_bytes"
fi
if [ -n "$MEMCG" ] && [ -d "$MEMCG" ]; then
	sh -c "echo \$\$ >$MEMCG/cgroup.procs; echo \$\$ >$T/oom.pid; exec python3 -c 'x = b\"\\x01\" * (256 << 20)'" 2>/dev/null
	OOM=$(cat "$T/oom.pid")
else
	note "oom: no memory controller (cgroup2 memory.max or v1) to run the OOM kill in"
	OOM=0
fi
wait $SPIN_JOB $WAIT_JOB
PY=${PY_JOB:-0}
[ -n "$PY_JOB" ] && wait "$PY_JOB"
SPIN=$(head -1 "$T/spin.pid")
WAITP=$(head -1 "$T/wait.pid")
stamp "workloads done: spin $SPIN, wait $WAITP, segv $SEGV, oom $OOM"

# the crash and OOM incidents: written 10 s (the rules' after) past the
# trigger, plus the time to seal them
deadline=$((SECONDS + 40))
while [ $SECONDS -lt $deadline ]; do
	"$FRCTL" --store "$T/store" incidents --json >"$T/inc.json" 2>/dev/null
	jq -e --argjson s "$SEGV" --argjson o "$OOM" \
		'any(.[]; any(.triggers[]; .pid == $s)) and ($o == 0 or any(.[]; any(.triggers[]; .pid == $o and .type == "oom")))' \
		"$T/inc.json" >/dev/null 2>&1 && break
	sleep 1
done
stamp "incidents"
"$FRCTL" --store "$T/store" dump --format json >"$T/dump.json" 2>"$T/dump.err" || note "frctl dump failed: $(head -c 300 "$T/dump.err")"
"$FRCTL" --store "$T/store" status --json >"$T/status.json"
stamp "parser: $(jq -c '.sampler.parser' "$T/status.json")"
stamp "dump ($(wc -c <"$T/dump.json") bytes)"
# one pass over the dump (jq is slow under TCG): what the checks look at
jq -n -c --argjson spin "$SPIN" --argjson wait "$WAITP" --argjson segv "$SEGV" --argjson oom "$OOM" --argjson py "$PY" '
	def named($re): any(.stack[]?; (.sym // "") | test($re));
	reduce inputs as $r ({types: {}, spin: 0, spin_tried: 0, spin_named: 0, py: 0, py_named: 0, wait: false, waker: null, segv: false, segv_site: false, oom: [], reset: false};
		.types[$r.type] += 1
		| if $r.type == "sample" and $r.pid == $spin then
			.spin += 1
			| .spin_tried += ($r | if named("^\\[unwind failed\\]$") then 0 else 1 end)
			| .spin_named += ($r | if named("^fr_spin_(seventy|thirty)[+]") and named("^main[+]") then 1 else 0 end)
		  elif $r.type == "sample" and $r.pid == $py then
			.py += 1
			| .py_named += ($r | if any(.stack[]?; .kind == "python" and .sym == "tokenize") then 1 else 0 end)
		  elif $r.type == "offcpu" and $r.pid == $wait and $r.duration_ns >= 1000000000 then
			.wait = true
			| .waker = ($r.waker // {} | (.kernel_frames // 0) as $k | (.stack // []) as $s |
				{kind, pid, comm, pipe: any($s[]; (.sym // "") | test("pipe_write[+]")), user: (($s | length) - $k),
				 frames: [$s[$k:][] | (.sym // "?")]})
		  elif $r.type == "signal" and $r.pid == $segv and $r.signal == "SIGSEGV" then
			.segv = true
			| .segv_site = ($r.code_name == "SEGV_MAPERR" and $r.addr == "0x0" and $r.stack_status == "taken"
				and (($r.stack[$r.kernel_frames].sym // "") | startswith("main+")))
		  elif $r.type == "oom" then .oom += [$r | {pid, comm, rss_kb, memcg}]
		  elif $r.type == "tcp" and ($r.event | startswith("reset")) then .reset = true
		  else . end)' <"$T/dump.json" >"$T/sum.json"
stamp "summary: $(cat "$T/sum.json")"

check '.[0].sources | to_entries | map(select(.value.enabled and (.value.attached | not))) | length == 0' "$T/status.json" \
	"sources: every source the shipped configuration enables attached ($(jq -r '[.sources | to_entries[] | select(.value.enabled) | .key + (if .value.attached then "" else "(NOT ATTACHED)" end)] | join(" ")' "$T/status.json"))"
if grep -E 'Failed to start source|verifier|libbpf: prog' "$T/daemon.log" >"$T/fail.log"; then
	note "sources: the daemon's log says: $(head -3 "$T/fail.log" | tr '\n' ' ' | cut -c1-400)"
else
	echo "ok sources: no source failed to start in the log" | tee -a "$RES/result"
fi
for ty in exec fork exit offcpu signal oom tcp sample metrics; do
	check ".[0].types.$ty > 0" "$T/sum.json" "records: $ty ($(jq ".types.$ty // 0" "$T/sum.json"))"
done
check '.[0].wait' "$T/sum.json" "offcpu: fr-wait's 1.5 s read"
# its waker: the child that wrote to the pipe, its kernel stack through
# the pipe's write, and a user stack (sched_waking, wakers.c; named when
# the parser had the time: under TCG its budget runs out, see below)
check ".[0].waker.kind == \"task\" and .[0].waker.pid != $WAITP and .[0].waker.comm == \"fr-wait\" and .[0].waker.pipe and .[0].waker.user > 0" \
	"$T/sum.json" "offcpu: fr-wait's waker, its child writing the pipe ($(jq -c '.waker' "$T/sum.json"))"
# of the samples the parser helper was given: under TCG an exchange takes
# milliseconds, and the daemon's budget for them (parse_cpu, 25 % of each
# second) leaves the rest with their leaf frame and "[unwind failed]"
# (parser.over_budget)
check '.[0].spin_tried >= 5 and .[0].spin_named >= 0.5 * .[0].spin_tried' "$T/sum.json" \
	"sample: fr-spin's user stacks named, fr_spin_* under main ($(jq -r '"\(.spin_named) of \(.spin_tried) unwound (\(.spin) sampled)"' "$T/sum.json") samples; parser: $(jq -c '.sampler.parser | {over_budget, skipped, timeouts, wait_us_max}' "$T/status.json"))"
# (named only where the parser had the time to unwind the native stack,
# whose interpreter frames the Python frames take the place of)
check '.[0].py > 0 and .[0].py_named > 0' "$T/sum.json" \
	"python: python3.11's samples have Python frames, tokenize among them ($(jq -r '"\(.py_named) of \(.py)"' "$T/sum.json"); walked: $(jq -c '.python.stacks' "$T/status.json"))"
check '.[0].segv' "$T/sum.json" "signal: SIGSEGV of fr-segv"
check '.[0].segv_site' "$T/sum.json" "signal: fr-segv's crash site (SEGV_MAPERR at 0x0 in main), read after it exited"
check '.[0].sampler.mappings.mmaps > 0 and .[0].sampler.mappings.lost == 0' "$T/status.json" \
	"mappings: tracked from the kernel's side-band events ($(jq -c '.sampler.mappings | {mmaps, execs, served, lost}' "$T/status.json"))"
check "any(.[0][]; any(.triggers[]; .pid == $SEGV and .signal == \"SIGSEGV\" and ((.exe // \"\") | endswith(\"/fr-segv\"))))" "$T/inc.json" \
	"crash: an incident whose trigger names fr-segv's exe ($(jq -c "[.[] | .triggers[] | select(.pid == $SEGV) | .exe]" "$T/inc.json"))"
if [ "$OOM" != 0 ]; then
	check "any(.[0].oom[]; .pid == $OOM and .rss_kb > 0 and ((.memcg // \"\") | test(\"fr-matrix-oom\")))" "$T/sum.json" \
		"oom: the victim, its RSS and memory cgroup ($(jq -c .oom "$T/sum.json"))"
	check "any(.[0][]; any(.triggers[]; .pid == $OOM and .type == \"oom\"))" "$T/inc.json" "oom: an incident"
fi
check '.[0].reset' "$T/sum.json" "tcp: the reset of a connect to a closed port"
# off-CPU user stacks: copied by BPF task work (6.18+); without it each
# record is counted (no_task_work) and the daemon says why, once
if jq -e '.sources.sched.attached' "$T/status.json" >/dev/null && ! grep -q bpf_task_work_schedule_resume_impl <(bpftool btf dump file /sys/kernel/btf/vmlinux 2>/dev/null); then
	check '.[0].offcpu_stacks.no_task_work > 0' "$T/status.json" \
		"offcpu: no BPF task work here: records counted as no_task_work ($(jq -c .offcpu_stacks "$T/status.json"))"
	[ "$(grep -c 'lacks BPF task work' "$T/daemon.log")" = 1 ] &&
		echo "ok offcpu: the daemon says once that this kernel lacks BPF task work" | tee -a "$RES/result" ||
		note "offcpu: the daemon did not say once that this kernel lacks BPF task work"
fi

# what the shipped configuration leaves off: the syscall source and the
# switch records, in a second run with them switched on
# and pressure rules: a kernel PSI trigger (2 s window) and one polled
# (12 s, over the kernel's 10 s)
sed -e '/^  syscall = {/,/^  };/ s/enabled = false;/enabled = true;/' \
	-e 's/full = false;/full = true;/' \
	-e 's/^    { name = "manual"; condition = "manual"; before = "5min"; after = "30s"; }$/&,\
    { name = "psi-kernel"; condition = "pressure"; threshold = "50%"; over = "2s"; },\
    { name = "psi-polled"; condition = "pressure"; threshold = "50%"; over = "12s"; }/' \
	"$T/shipped.conf" >"$T/all.conf"
grep -q 'psi-polled' "$T/all.conf" || note "pressure: could not add the pressure rules to a copy of the shipped configuration"
grep -q 'full = true;' "$T/all.conf" || note "reload: could not switch full mode on in a copy of the shipped configuration"
end_daemon
start_daemon "$T/all.conf"
sleep 2
"$FRCTL" --store "$T/store" status --json >"$T/status2.json"
check '.[0].sources.syscall.attached and .[0].sources.sched.attached' "$T/status2.json" \
	"sources: syscall and sched (full mode), off as shipped, attached when switched on"
"$FRCTL" --store "$T/store" dump --last 5s --type switch --format json 2>/dev/null | head -1 >"$T/dump2.json"
check 'any(.[]; .type == "switch")' "$T/dump2.json" "records: switch (full mode)"
if [ -e /proc/pressure/memory ]; then
	check '.[0].triggers.rules["psi-kernel"].watch.mode == "kernel" and .[0].triggers.rules["psi-polled"].watch.mode == "polled"' \
		"$T/status2.json" "triggers: a pressure rule as a kernel PSI trigger, one polled"
else
	note "pressure: this kernel has no /proc/pressure"
fi
if grep -E 'Failed to start source|libbpf: prog' "$T/daemon.log" >"$T/fail.log"; then
	note "sources (all on): the daemon's log says: $(head -3 "$T/fail.log" | tr '\n' ' ' | cut -c1-400)"
fi
end_daemon
echo "the probes' notes in the log:"
grep -E '^<[0-4]>' "$T/daemon.log" | sort | uniq -c | sort -rn | head -20
stamp "smoke done"
