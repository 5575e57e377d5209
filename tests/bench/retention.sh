#!/bin/bash
# Benchmark (not a test): how many hours of history the shipped store
# (store.size "auto": 2 GiB on a file system of 20 GiB or more, the bound
# the daemon reports in status) and a 256 MiB one (the default until
# 2026-12-06) hold with the shipped configuration on a busy machine, and
# where the bytes go.  flightrecd runs with conf/flightrec.conf
# on a private store while perf bench sched messaging loops and stress-ng
# --cpu 1 --get 1 runs (processes coming and going, CPU samples, scheduler
# waits, metrics every second); the store's bytes written (frctl status
# --json, store.bytes_written: chunks as written, headers included) over DUR
# seconds after a warm-up give bytes per second, and the store size / that
# rate the retention: EXTRAPOLATED from DUR seconds, not observed for hours.
# `frctl dump --sizes` over the same DUR seconds says which record types and
# field streams the bytes are, and store-variants what other encodings of
# the same chunks would take (tests/bench/store-variants.c).  The peer, in
# the same run: `perf record -a -g -F 49 -z` (the same sampling rate,
# compressed), whose file growth says how long as many bytes of it would last.
#   tests/bench/retention.sh BUILD_DIR [DUR_S]     (600; QUICK=1: 20 s)
#   KEEP=DIR: copy the store there afterwards
BUILD=${1:-build}
DUR=${2:-600}
. "$(dirname "$0")/lib.sh"
need_pkg perf linux-perf
need_pkg stress-ng stress-ng
[ "$QUICK" = 1 ] && DUR=20
CONF="$(dirname "$0")/../../conf/flightrec.conf"
FRCTL=("$BUILD/ctl/frctl" --config "$CONF" --store "$T/store" --socket "$T/control.sock")
WARM=10
iso() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }

start_flightrecd "$CONF"
stress-ng --cpu 1 --get 1 -t $((DUR + WARM + 10)) >/dev/null 2>&1 & BENCH_PIDS+=($!)
# the loop stops at its next turn when $T/stop exists (killing perf bench
# mid-run would leave its workers blocked on their pipes)
( while [ ! -e "$T/stop" ]; do perf bench sched messaging -g 4 -l 200 >/dev/null 2>&1; done ) & LOOP=$!
perf record -q -a -g -F 49 -z -o "$T/perf.data" >/dev/null 2>"$T/perf.log" & PERF=$!
BENCH_PIDS+=("$PERF")
sleep "$WARM"
st0=$(frstatus); t0=$(now); p0=$(stat -c %s "$T/perf.data")
sleep "$DUR"
st1=$(frstatus); t1=$(now); p1=$(stat -c %s "$T/perf.data")
touch "$T/stop"
wait "$LOOP"
kill -INT "$PERF"; wait "$PERF" 2>/dev/null || true
kill "${BENCH_PIDS[@]}" 2>/dev/null || true
wait "${BENCH_PIDS[@]}" 2>/dev/null || true
BENCH_PIDS=()
stop_tool
[ -z "${KEEP:-}" ] || { rm -rf "$KEEP"; cp -a "$T/store" "$KEEP"; }

# the whole seconds inside the measured span
W=(--since "$(iso $((${t0%.*} + 1)))" --until "$(iso $((${t1%.*} - 1)))")
"${FRCTL[@]}" dump --sizes "${W[@]}" >"$T/sizes.txt"
"${FRCTL[@]}" dump --sizes --format json "${W[@]}" >"$T/sizes.json"

bytes=$(jq -n --argjson a "$st0" --argjson b "$st1" '$b.store.bytes_written - $a.store.bytes_written')
rate=$(calc "$bytes / ($t1 - $t0)")
prate=$(calc "($p1 - $p0) / ($t1 - $t0)")
# the bound "auto" came to on this file system, as the daemon reported it
bound=$(jq -n --argjson b "$st1" '$b.store.bytes_bound')
h=$(calc "$bound / $rate / 3600")
ph=$(calc "$bound / $prate / 3600")
h256=$(calc "268435456 / $rate / 3600")
h1g=$(calc "1073741824 / $rate / 3600")
machine
echo "shipped configuration (conf/flightrec.conf), busy machine (perf bench sched messaging loop + stress-ng --cpu 1 --get 1), ${DUR}s measured after ${WARM}s"
printf 'store written: %s bytes in %.1f s = %.0f bytes/s (%.1f MiB/h)\n' "$bytes" "$(calc "$t1 - $t0")" "$rate" "$(calc "$rate * 3600 / 1048576")"
printf 'the shipped store (store.size "auto": %s bytes here) holds %.1f hours; 256 MiB %.1f hours; 1 GiB %.1f hours (EXTRAPOLATED from %s s)\n' \
	"$bound" "$h" "$h256" "$h1g" "$DUR"
printf 'peer: perf record -a -g -F 49 -z wrote %.0f bytes/s: as many bytes of it would hold %.1f hours\n' "$prate" "$ph"
echo "where the bytes go (frctl dump --sizes over the measured span):"
cat "$T/sizes.txt"
echo "what other encodings would make of this store (store-variants):"
"$BUILD/tests/bench/store-variants" "$T/store" | tee "$T/variants.txt"
extra=$(jq -c --argjson r "$rate" --argjson d "$DUR" --argjson h1g "$h1g" --argjson pr "$prate" --argjson b "$bound" \
	'{bytes_per_s: $r, measured_s: $d, extrapolated: true, bytes_bound: $b, hours_1gib: $h1g, perf_bytes_per_s: $pr,
	  sizes: {stored_bytes, payload_bytes, raw_bytes, records,
		  types: [.types[] | {type, records, disk_bytes}], streams: [.streams[] | {stream, disk_bytes}]}}' "$T/sizes.json")
result "retention of the shipped store (store.size \"auto\"), shipped config, busy machine (extrapolated)" "hours" "$h" "$ph" \
	"perf record -a -g -F 49 -z, the same run, as many bytes" "$(calc "$h / $ph")" ">= 24 h" "$(ge "$h" 24)" "$extra"
result "retention of a 256 MiB store (the default until 2026-12-06), shipped config, busy machine (extrapolated)" "hours" "$h256" null "-" null \
	"print it" null "{\"bytes_per_s\": $rate}"
