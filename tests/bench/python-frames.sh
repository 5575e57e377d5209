#!/bin/bash
# Benchmark (not a test): what Python frames (issue 47) cost per CPU
# sample, next to native-only samples.  The shipped default configuration
# (49 Hz), and in turn, REPS times each, for SECONDS each, one CPU-bound
# process:
#   native    fr-spin (C, no Python)
#   py-2      Debian's python3.11 in a loop two Python frames deep
#   py-30     the same loop 30 frames deep (recursion)
#   py-80     80 frames deep: the walk's 64-frame bound, cut
# Per workload: the fr_sample BPF program's run time per run
# (kernel.bpf_stats_enabled=1, all its runs: the workload's and the
# machine's few others), and the daemon's CPU (its threads and its parser
# helper's, /proc/PID/task/*/schedstat) per sample recorded, over the
# workload's run plus 2.5 s to drain; the Python frames per sample and the
# descriptions written (frctl status --json .python).
#   tests/bench/python-frames.sh BUILD_DIR [REPS] [SECONDS]    QUICK=1: 1 rep of 2 s
BUILD=${1:-build}
REPS=${2:-3}
SECS=${3:-6}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
[ "$QUICK" = 1 ] && REPS=1 SECS=2
PY=/usr/bin/python3.11
SPIN="$BUILD/tests/helpers/fr-spin"
[ -x "$PY" ] || { echo "$PY is missing (Debian package python3.11)" >&2; exit 1; }
[ -x "$SPIN" ] || { echo "$SPIN is missing: ninja -C $BUILD" >&2; exit 1; }
cat >"$T/deep.py" <<'PY'
import sys, time
def deep(n, until):
    if n > 1:
        return deep(n - 1, until)
    s = 0
    while time.monotonic() < until:
        s += sum(range(300))
    return s
sys.setrecursionlimit(1000)
deep(int(sys.argv[1]), time.monotonic() + float(sys.argv[2]))
PY
WORKLOADS="native py-2 py-30 py-80"
run_wl() {
	case $1 in
	native) "$SPIN" "$SECS" >/dev/null ;;
	py-*) "$PY" "$T/deep.py" "$(( ${1#py-} - 1 ))" "$SECS" ;;
	esac
}
sample_ns() { bpf_prog_times "$TOOL" | awk '$1 == "fr_sample" { c += $2; t += $3 } END { print c + 0, t + 0 }'; }

bpf_stats_on
start_flightrecd "$HERE/../../conf/flightrec.conf"
# the interpreter found once, as on any machine after its first Python stack
"$PY" "$T/deep.py" 1 1
sleep 2
declare -A bpf daemon frames descs
for i in $(seq "$REPS"); do
	for w in $WORKLOADS; do
		st0=$(frstatus) c0=$(cpu_of "$TOOL")
		read -r n0 t0 <<<"$(sample_ns)"
		run_wl "$w"
		sleep 2.5
		st1=$(frstatus) c1=$(cpu_of "$TOOL")
		read -r n1 t1 <<<"$(sample_ns)"
		s=$(jq -n --argjson a "$st0" --argjson b "$st1" '$b.sources.sample.records - $a.sources.sample.records')
		bpf[$w]+="$(calc "($t1 - $t0) / ($n1 - $n0)") "
		daemon[$w]+="$(calc "1e9 * ($c1 - $c0) / $s") "
		frames[$w]+="$(jq -n --argjson a "$st0" --argjson b "$st1" --argjson s "$s" \
			'(($b.python.frames // 0) - ($a.python.frames // 0)) / $s') "
		descs[$w]+="$(jq -n --argjson a "$st0" --argjson b "$st1" '($b.python.descriptions // 0) - ($a.python.descriptions // 0)') "
	done
done
frstatus | jq -c .python >"$T/python.json"
stop_tool
bpf_stats_off

machine
echo "default config, 49 Hz; $REPS runs of ${SECS} s per workload; medians (spread)"
printf '%-8s %22s %26s %16s %12s\n' workload "fr_sample ns/run" "daemon ns CPU/sample" "Python frames" "descriptions"
for w in $WORKLOADS; do
	printf '%-8s %12s (%s) %14s (%s) %16s %12s\n' "$w" "$(med "${bpf[$w]}")" "$(spr "${bpf[$w]}")" \
		"$(med "${daemon[$w]}")" "$(spr "${daemon[$w]}")" "$(med "${frames[$w]}")" "$(med "${descs[$w]}")"
	result "python frames $w: fr_sample BPF time per run" "ns" "$(med "${bpf[$w]}")" "$(med "${bpf[native]}")" \
		"native-only samples (fr-spin)" "$(calc "$(med "${bpf[$w]}") / $(med "${bpf[native]}")")" "-" null \
		"$(jq -cn --arg b "${bpf[$w]}" --arg d "${daemon[$w]}" --arg f "${frames[$w]}" \
			'{bpf_ns_runs: $b, daemon_ns_per_sample_runs: $d, python_frames_per_sample_runs: $f}')"
done
echo "status python at the end: $(cat "$T/python.json")"
