# Shared by the benchmarks (sourced; expects BUILD): statistics, the
# machine line, a private flightrecd, tracefs for the peers, and results
# appended as JSON Lines to $FR_BENCH_JSON when it is set.
set -euo pipefail
# a benchmark that stops on an error says which command, where: set -e
# alone exits without a word (run-all.sh's table lost its servers rows so
# on 2026-12-06, from a 0 s run that printed nothing)
set -E
trap 'fr_rc=$?; echo "$(basename "$0"): line $LINENO: '"'"'$BASH_COMMAND'"'"' failed with status $fr_rc" >&2' ERR
T=$(mktemp -d "${TMPDIR:-/var/tmp}/fr-bench-XXXXXX")
TOOL=
TRACEFS_MOUNTED=
BPF_STATS0=
CG=
# extra pids a benchmark started (workloads, generators): killed on exit
BENCH_PIDS=()
bench_cleanup() {
	local p
	for p in "${BENCH_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	if [ -n "$TOOL" ] && kill -0 "$TOOL" 2>/dev/null; then
		kill -INT "$TOOL" 2>/dev/null || true
		wait "$TOOL" 2>/dev/null || true
	fi
	[ -n "$BPF_STATS0" ] && sysctl -q kernel.bpf_stats_enabled="$BPF_STATS0"
	[ -n "$TRACEFS_MOUNTED" ] && umount /sys/kernel/tracing 2>/dev/null
	# (empty once its workloads are gone)
	[ -n "$CG" ] && rmdir "$CG" 2>/dev/null
	rm -rf "$T"
}
trap bench_cleanup EXIT
trap 'exit 143' TERM INT

# numbers on stdin -> median / spread (min..max)
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
spread() { sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {printf "%s..%s", lo, hi}'; }
now() { date +%s.%N; }
# med "v1 v2 ..." / spr "v1 v2 ...": median and spread of a list
med() { tr ' ' '\n' <<<"$1" | grep . | median; }
spr() { tr ' ' '\n' <<<"$1" | grep . | spread; }
# pct P: the P-th percentile (nearest rank) of numbers on stdin
pct() { sort -g | awk -v p="$1" '{a[NR]=$1} END {i=int(NR*p/100+0.999); if (i<1) i=1; print a[i]}'; }
# calc EXPR: awk arithmetic, e.g. calc "$a / $b"
calc() { awk "BEGIN { printf \"%.6g\", ($1) }"; }
# le A B / ge A B: "true" or "false", for result's MET
le() { awk -v a="$1" -v b="$2" 'BEGIN { print (a <= b) ? "true" : "false" }'; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { print (a >= b) ? "true" : "false" }'; }
# secs CMD...: wall seconds CMD took (its output discarded)
secs() { local t0 t1; t0=$(now); "$@" >/dev/null 2>&1; t1=$(now); calc "$t1 - $t0"; }
# bench_cgroup: a cgroup of its own for the workload, CG, removed at exit
# (cgroup v1 cpuacct on these machines, else v2); usage_s: the CPU
# seconds its tasks have used so far
bench_cgroup() {
	if [ -d /sys/fs/cgroup/cpuacct ]; then
		CG=/sys/fs/cgroup/cpuacct/fr-bench-$$
	else
		CG=/sys/fs/cgroup/fr-bench-$$
	fi
	mkdir "$CG"
}
usage_s() {
	if [ -f "$CG/cpuacct.usage" ]; then
		awk '{ printf "%.6f", $1 / 1e9 }' "$CG/cpuacct.usage"
	else
		awk '$1 == "usage_usec" { printf "%.6f", $2 / 1e6 }' "$CG/cpu.stat"
	fi
}
# CPU seconds process $1 has run so far, all its threads and those of its
# children running now (ns precision): flightrecd's include its parser
# helper, flightrec-parse, which unwinds and names the user stacks
cpu_of() {
	local kids
	kids=$(cat /proc/"$1"/task/*/children 2>/dev/null | tr ' ' '\n' | sed -e 's|^[0-9]|/proc/&|' -e 's|$|/task/*/schedstat|' | grep '^/proc' || true)
	# shellcheck disable=SC2086 # the globs are meant
	cat /proc/"$1"/task/*/schedstat $kids 2>/dev/null | awk '{ s += $1 } END { printf "%.6f", s / 1e9 }'
}
# QUICK=1: the short validation pass (each script picks its own small sizes)
QUICK=${QUICK:-0}
# (the commit: FR_COMMIT if set, for a build of a tree without .git such as
# a git archive; else the HEAD of the source tree the build was set up
# from, which meson records; "?" when neither says)
machine() {
	local src commit=${FR_COMMIT:-}
	if [ -z "$commit" ]; then
		src=$(jq -r '.directories.source // empty' "$BUILD/meson-info/meson-info.json" 2>/dev/null)
		commit=$(git -C "${src:-$BUILD/..}" rev-parse --short HEAD 2>/dev/null || echo ?)
	fi
	echo "kernel $(uname -r), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), commit $commit"
}
# need_pkg PROGRAM PACKAGE: installs the peer tool if missing
need_pkg() { command -v "$1" >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$2" >/dev/null; }
# tracefs for perf/bpftrace tracepoints (mounted here only if it is not)
need_tracefs() {
	[ -e /sys/kernel/tracing/events ] && return 0
	mount -t tracefs tracefs /sys/kernel/tracing
	TRACEFS_MOUNTED=1
}
# write_sched_conf FILE: a config recording every context switch (sched
# full mode) and nothing else
write_sched_conf() {
	cat >"$1" <<CONF
sources = {
  syscall = { enabled = false; }; block = { enabled = false; }; oom = { enabled = false; };
  signal = { enabled = false; }; tcp = { enabled = false; }; sample = { enabled = false; };
  sched = { enabled = true; full = true; };
};
metrics = { enabled = false; };
CONF
}
# start_flightrecd CONFIG [CGROUP]: a private daemon on $T/store (in
# CGROUP, a cgroup directory, from its first instruction); TOOL is its pid
start_flightrecd() {
	rm -rf "$T/store"
	sh -c '[ -z "$1" ] || echo $$ >"$1/cgroup.procs"; shift; exec "$@"' sh "${2:-}" \
		"$BUILD/daemon/flightrecd" --config "$1" --store "$T/store" --socket "$T/control.sock" >"$T/daemon.log" 2>&1 &
	TOOL=$!
	for _ in $(seq 100); do
		"$BUILD/ctl/frctl" --config "$1" --store "$T/store" --socket "$T/control.sock" status >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "flightrecd did not start: $(cat "$T/daemon.log")" >&2
	exit 1
}
# start_perf ARGS...: perf record ARGS in the background; TOOL is its pid.
# perf has no readiness signal: it is set up well within a second.
start_perf() {
	perf record -q "$@" >/dev/null 2>"$T/perf.log" &
	TOOL=$!
	sleep 1
}
# frstatus: the private daemon's status --json
frstatus() { "$BUILD/ctl/frctl" --store "$T/store" --socket "$T/control.sock" status --json; }
# bpf_stats_on: kernel.bpf_stats_enabled=1 until the script ends
bpf_stats_on() {
	[ -n "$BPF_STATS0" ] || BPF_STATS0=$(sysctl -n kernel.bpf_stats_enabled)
	sysctl -q kernel.bpf_stats_enabled=1
}
bpf_stats_off() { [ -z "$BPF_STATS0" ] || sysctl -q kernel.bpf_stats_enabled="$BPF_STATS0"; }
# bpf_prog_times PID: "name run_cnt run_time_ns" of the BPF programs PID
# holds (found by its fds' prog_id: this bpftool does not list owner pids)
bpf_prog_times() {
	local id
	for id in $(grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{ print $2 }' | sort -u); do
		bpftool -j prog show id "$id" 2>/dev/null | jq -r '"\(.name) \(.run_cnt // 0) \(.run_time_ns // 0)"' || true
	done
}
# busy_for SECONDS: the busy machine whose recording dump-window.sh and
# report-html.sh read back (perf bench sched messaging in a loop and
# stress-ng --cpu 1 --get 1) for SECONDS; BUSY_T0 and BUSY_T1 are its
# start and end (epoch seconds)
busy_for() {
	local loop
	stress-ng --cpu 1 --get 1 -t "$1" >/dev/null 2>&1 & BENCH_PIDS+=($!)
	( while [ ! -e "$T/busy-stop" ]; do perf bench sched messaging -g 4 -l 200 >/dev/null 2>&1; done ) & loop=$!
	BUSY_T0=$(date +%s)
	sleep "$1"
	BUSY_T1=$(date +%s)
	touch "$T/busy-stop"
	wait "$loop" "${BENCH_PIDS[@]}" 2>/dev/null || true
	BENCH_PIDS=()
	rm -f "$T/busy-stop"
}
stop_tool() {
	[ -n "$TOOL" ] || return 0
	kill -INT "$TOOL" 2>/dev/null || true
	wait "$TOOL" 2>/dev/null || true
	TOOL=
}
# result NAME UNIT OURS PEER PEER_NAME RATIO TARGET MET [EXTRA_JSON]:
# one JSON line for BENCHMARKS.md's table
result() {
	[ -n "${FR_BENCH_JSON:-}" ] || return 0
	jq -cn --arg name "$1" --arg unit "$2" --argjson ours "$3" --argjson peer "$4" --arg peer_name "$5" \
		--argjson ratio "$6" --arg target "$7" --argjson met "$8" --arg machine "$(machine)" \
		--argjson extra "${9:-{\}}" --arg load "$(cut -d' ' -f1-3 /proc/loadavg)" --argjson quick "$QUICK" \
		'{name: $name, unit: $unit, ours: $ours, peer: $peer, peer_name: $peer_name, ratio: $ratio,
		  target: $target, met: $met, machine: $machine, loadavg: $load, quick: ($quick == 1)} + $extra' >>"$FR_BENCH_JSON"
}
