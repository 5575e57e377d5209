# Shared by the benchmarks (sourced; expects BUILD): statistics, the
# machine line, a private flightrecd, tracefs for the peers, and results
# appended as JSON Lines to $FR_BENCH_JSON when it is set.
set -euo pipefail
T=$(mktemp -d "${TMPDIR:-/var/tmp}/fr-bench-XXXXXX")
TOOL=
TRACEFS_MOUNTED=
bench_cleanup() {
	if [ -n "$TOOL" ] && kill -0 "$TOOL" 2>/dev/null; then
		kill -INT "$TOOL" 2>/dev/null || true
		wait "$TOOL" 2>/dev/null || true
	fi
	[ -n "$TRACEFS_MOUNTED" ] && umount /sys/kernel/tracing 2>/dev/null
	rm -rf "$T"
}
trap bench_cleanup EXIT
trap 'exit 143' TERM INT

# numbers on stdin -> median / spread (min..max)
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
spread() { sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {printf "%s..%s", lo, hi}'; }
now() { date +%s.%N; }
machine() {
	echo "kernel $(uname -r), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), commit $(git -C "$BUILD/.." rev-parse --short HEAD 2>/dev/null || echo ?)"
}
# need_pkg PROGRAM PACKAGE: installs the peer tool if missing
need_pkg() { command -v "$1" >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$2" >/dev/null; }
# tracefs for perf/bpftrace tracepoints (mounted here only if it is not)
need_tracefs() {
	[ -e /sys/kernel/tracing/events ] && return 0
	mount -t tracefs tracefs /sys/kernel/tracing
	TRACEFS_MOUNTED=1
}
# start_flightrecd CONFIG: a private daemon on $T/store; TOOL is its pid
start_flightrecd() {
	rm -rf "$T/store"
	"$BUILD/daemon/flightrecd" --config "$1" --store "$T/store" --socket "$T/control.sock" >"$T/daemon.log" 2>&1 &
	TOOL=$!
	for _ in $(seq 100); do
		"$BUILD/ctl/frctl" --config "$1" --store "$T/store" --socket "$T/control.sock" status >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "flightrecd did not start: $(cat "$T/daemon.log")" >&2
	exit 1
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
		--argjson extra "${9:-{\}}" \
		'{name: $name, unit: $unit, ours: $ours, peer: $peer, peer_name: $peer_name, ratio: $ratio,
		  target: $target, met: $met, machine: $machine} + $extra' >>"$FR_BENCH_JSON"
}
