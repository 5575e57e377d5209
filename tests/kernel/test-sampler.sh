#!/bin/bash
# CPU sampling: with no hardware PMU the sampler falls back to cpu-clock
# and says so in status; a CPU-bound process gets ~49 samples per second
# of CPU with user frames; a syscall-heavy one gets samples with kernel
# frames; PMU counters are in the metrics exactly when there is a PMU.
# The hog's samples are compared with its CPU time (user + system, as
# wait4() reports it), not its wall time: on a busy machine, or next to a
# sanitized daemon, the hog gets only part of a CPU, and the sampler
# samples what runs, so only CPU time predicts the count.
BUILD=$1
. "$(dirname "$0")/lib.sh"

cat >"$T/fr.conf" <<CONF
store = { size = "16M"; segments = 4; sync_interval = "200ms"; };
CONF
start_daemon "$T/fr.conf"
# bash's time reports the CPU of the process it waited for; sh writes its
# pid and execs the hog, so that is the hog's pid and the hog's CPU
TIMEFORMAT='%3U %3S'
{ time sh -c 'echo $$ >"$1"; exec "$2" 2400000000 2>/dev/null >"$3"' sh \
	"$T/hog.pid" "$BUILD/tests/bench/cpu-hog" "$T/hog.wall"; } 2>"$T/hog.cpu" &
HOGJOB=$!
"$BUILD/tests/bench/getppid-loop" 3000000 >/dev/null &
SYS=$!
wait $HOGJOB $SYS
HOG=$(cat "$T/hog.pid")
secs=$(awk '{ printf "%.3f", $1 + $2 }' "$T/hog.cpu")
wall=$(cat "$T/hog.wall")
sleep 0.5
"$FRCTL" --store "$T/store" status --json >"$T/status.json"
"$FRCTL" --store "$T/store" dump --type sample --format json >"$T/samples.json"

# the kernel's own answer: is there a PMU that counts cycles? (perf is
# only asked, flightrecd does its own perf_event_open)
if [ -d /sys/bus/event_source/devices/cpu ] && ! perf stat -e cycles -x, true 2>&1 | grep -q 'not supported'; then
	want=cycles
else
	want=cpu-clock
fi
jq -e --arg w "$want" '.sampler.event == $w and .sampler.hz == 49 and .sources.sample.attached' "$T/status.json" >/dev/null ||
	fail "sampler: $(jq -c '{sampler, sample: .sources.sample}' "$T/status.json"), expected event $want"
ok "sampler uses $want at 49 Hz, and status says so"

# hardware counters in the metrics exactly when the PMU has them
"$FRCTL" --store "$T/store" dump --type metrics --format json >"$T/metrics.json"
[ -s "$T/metrics.json" ] || fail "no metrics records"
if [ "$want" = cycles ]; then
	jq -e '.sampler.pmu_counters' "$T/status.json" >/dev/null || fail "a PMU, but status says no counters"
	jq -e -s 'any(.[]; .pmu.cycles_per_s > 0 and .pmu.ipc > 0)' "$T/metrics.json" >/dev/null ||
		fail "a PMU, but no cycles in the metrics"
	ok "PMU counters in the metrics (cycles, instructions, IPC)"
else
	jq -e '.sampler.pmu_counters == false' "$T/status.json" >/dev/null || fail "no PMU, but status says counters"
	jq -e -s 'all(.[]; has("pmu") | not)' "$T/metrics.json" >/dev/null || fail "no PMU, but pmu in the metrics"
	ok "no PMU: status says so and the metrics carry no pmu object"
fi

# About 4 s of CPU, about 196 samples.  The count is a sample of which
# task each 49 Hz tick finds running, so it scatters around the expected
# value (by about 10 % when the hog has a small share of the CPUs); a
# sampler at another rate, or one that loses samples, falls outside 20 %.
n=$(jq -s --argjson p "$HOG" '[.[] | select(.pid == $p)] | length' "$T/samples.json")
expect=$(awk -v s="$secs" 'BEGIN { printf "%d", s * 49 }')
awk -v s="$secs" 'BEGIN { exit !(s >= 1) }' || fail "the CPU hog got only ${secs}s of CPU (${wall}s wall)"
awk -v n="$n" -v e="$expect" 'BEGIN { exit !(n >= 0.8 * e && n <= 1.2 * e) }' ||
	fail "$n samples of the CPU hog for ${secs}s of CPU, ${wall}s wall (expected about $expect)"
jq -e -s --argjson p "$HOG" 'all(.[] | select(.pid == $p); (.stack | length) >= 1 and (.stack[0].addr | startswith("0x")))' \
	"$T/samples.json" >/dev/null || fail "CPU hog samples without a stack"
ok "CPU hog: $n samples for ${secs}s of CPU, ${wall}s wall (about $expect expected), each with a stack"
jq -e -s --argjson p "$SYS" 'any(.[]; .pid == $p and .kernel_frames > 0)' "$T/samples.json" >/dev/null ||
	fail "no sample with kernel frames for the syscall loop"
ok "syscall loop: samples with kernel frames"
