#!/bin/bash
# Overload: a syscall flood far above what the daemon is allowed to drain
# (--max-drain-cpu 1: 1 % of one CPU).  The flood runs at nice 19, so the
# daemon could take all the CPU it wanted; it must not:
#   - its CPU (all threads, /proc/PID/stat) stays under 3 % of one CPU
#   - it sheds: windows cut short, drops counted in BPF, gaps in the store
#   - its peak RSS (VmHWM) stays under 64 MiB, at start (loading the BPF
#     programs: the kernel's BTF is parsed) and under the flood (measured
#     apart: the peak is reset, /proc/PID/clear_refs, before the flood)
#   - it answers `frctl status` within 1 s every time during the flood
#   - afterwards it catches up (logs that the load is back under budget)
BUILD=$1
HELPERS=$2
. "$(dirname "$0")/lib.sh"
FLOOD_S=8
CPU_MAX_PCT=3
RSS_MAX_KB=$((64 * 1024))
# the sanitized run (scripts/check's third build): ASan's shadow memory and
# quarantine (up to 256 MiB of freed blocks by default) are not the
# daemon's; its budget is checked in the plain build.  (256 MiB here was
# passed by 0.3 % once, issue 27, with the plain build at 60 of 64 MiB.)
[ -n "${ASAN_OPTIONS:-}" ] && RSS_MAX_KB=$((320 * 1024))

cat >"$T/fr.conf" <<CONF
store = { size = "64M"; segments = 8; };
sources = { syscall = { enabled = true; threshold = "1us"; }; };
CONF
# without meson's MALLOC_PERTURB_: it fills every block malloc hands out,
# so what libbpf allocates and never touches (most of its BTF index) is
# made resident, 43 -> 61 MiB at start: not what a production daemon has
env -u MALLOC_PERTURB_ "$FLIGHTRECD" --config "$T/fr.conf" --store "$T/store" --max-drain-cpu 1 >>"$T/daemon.log" 2>&1 &
DPID=$!
for _ in $(seq 100); do
	"$FRCTL" --store "$T/store" status >/dev/null 2>&1 && break
	sleep 0.1
done
sleep 1
hwm_start=$(awk '/VmHWM/ {print $2}' "/proc/$DPID/status")
echo 5 >"/proc/$DPID/clear_refs" # the peak from now on: the flood's

ticks() { awk '{print $14 + $15}' "/proc/$DPID/stat"; }
HZ=$(getconf CLK_TCK)
t0=$(ticks)
w0=$(date +%s%N)
nice -n 19 "$HELPERS/fr-syscall-flood" 4 "$FLOOD_S" >"$T/flood.out" &
FLOOD=$!
slowest=0
while kill -0 "$FLOOD" 2>/dev/null; do
	a=$(date +%s%N)
	timeout 5 "$FRCTL" --store "$T/store" status --json >"$T/status.json" || fail "status did not answer during the flood"
	ms=$((($(date +%s%N) - a) / 1000000))
	[ "$ms" -gt "$slowest" ] && slowest=$ms
	sleep 0.5
done
wait "$FLOOD"
t1=$(ticks)
w1=$(date +%s%N)
hwm=$(awk '/VmHWM/ {print $2}' "/proc/$DPID/status")
# what the peak is made of, as it is now (heap, mapped files, ring buffers)
grep -E '^(VmHWM|VmRSS|RssAnon|RssFile|RssShmem)' "/proc/$DPID/status" | tr -s ' \t' ' ' | paste -sd' '
cpu_pct=$(python3 -c "print('%.2f' % (($t1 - $t0) / $HZ / (($w1 - $w0) / 1e9) * 100))")
echo "flood: $(cat "$T/flood.out") calls in ${FLOOD_S}s; daemon CPU $cpu_pct % of one CPU; peak RSS $hwm kB (at start $hwm_start kB); slowest status ${slowest} ms"
"$FRCTL" --store "$T/store" status --json >"$T/status.json"
jq -c '{overload, per_cpu}' "$T/status.json"
jq -c '.sampler | {symbols: .symbols | del(.perf_maps), unwind}' "$T/status.json" || true

python3 -c "import sys; sys.exit(0 if $cpu_pct <= $CPU_MAX_PCT else 1)" ||
	fail "daemon used $cpu_pct % of a CPU during the flood (cap 1 %, allowed $CPU_MAX_PCT %)"
ok "daemon CPU bounded: $cpu_pct % of one CPU under the flood"
jq -e '.overload.windows_cut > 0 and ([.per_cpu[].dropped] | add) > 0' "$T/status.json" >/dev/null ||
	fail "the daemon did not shed load: $(jq -c '{overload, per_cpu}' "$T/status.json")"
ok "load shed: $(jq '.overload.windows_cut' "$T/status.json") drain windows cut short, $(jq '[.per_cpu[].dropped] | add' "$T/status.json") records dropped in BPF"
[ "$hwm_start" -le "$RSS_MAX_KB" ] || fail "peak RSS at start $hwm_start kB over the $RSS_MAX_KB kB budget"
[ "$hwm" -le "$RSS_MAX_KB" ] || fail "peak RSS under the flood $hwm kB over the $RSS_MAX_KB kB budget"
ok "peak RSS within $RSS_MAX_KB kB: $hwm_start kB at start, $hwm kB under the flood"
[ "$slowest" -le 1000 ] || fail "status took $slowest ms during the flood"
ok "status answered in at most $slowest ms during the flood"
for _ in $(seq 150); do
	grep -q 'Load back under the drain budget' "$T/daemon.log" && break
	sleep 0.1
done
grep -q 'Load back under the drain budget' "$T/daemon.log" || fail "the daemon did not leave the shedding state after the flood"
stop_daemon
"$FRCTL" --store "$T/store" dump --type gap --format json >"$T/gaps.json"
lost=$(jq -s '[.[].lost] | add // 0' "$T/gaps.json")
dropped=$(grep -oP 'CPU \d+: \d+ records emitted, \d+ delivered, \K\d+' "$T/daemon.log" | paste -sd+ | bc)
[ "$lost" -eq "$dropped" ] || fail "gaps in the store say $lost lost, BPF dropped $dropped"
ok "the shed records are in the store as gaps ($lost)"
