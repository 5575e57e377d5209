#!/bin/bash
# Benchmark (not a test): `frctl rules test` over a day of store (issue 45:
# under 30 s).  A day of the busy workload is about 66 million records
# (report-baseline.sh's 600 s window held 456 696: 761 a second).  A store
# of that many synthetic records (exec records with printable argv, and
# syscall records of 100 ms and more; fr-store-fill, through the real
# writer, a keyframe every 30 s) spread over 24 h is made: its bytes found
# by filling a small store first and counting its records.  Then `frctl
# rules test` of all of it with a rule on slow write() calls (every 300th
# syscall record: ~110 000 matches, most suppressed by the cooldown), REPS
# runs, warm cache; medians and min..max; records a second.
#   tests/bench/rules-day.sh BUILD_DIR [REPS] [RECORDS]   QUICK=1: 1 rep, 5 M records
BUILD=${1:-build}
REPS=${2:-3}
RECORDS=${3:-66000000}
. "$(dirname "$0")/lib.sh"
[ "$QUICK" = 1 ] && REPS=1 RECORDS=5000000
FILL="$BUILD/tests/helpers/fr-store-fill"
BOOT=0123456789abcdef0123456789abcdef

# records per byte of chunks, from 64 MiB of them
"$FILL" "$T/probe" $((1 << 30)) 16 $((64 << 20)) 86400 0 "$BOOT" text keyframes >/dev/null
probe=$( ("$BUILD/ctl/frctl" --store "$T/probe" status --json || true) | jq .store.records)
bytes=$(awk -v r="$RECORDS" -v p="$probe" 'BEGIN { printf "%d", r / p * 64 * 1048576 }')
rm -rf "$T/probe"
"$FILL" "$T/store" $((1 << 30)) 16 "$bytes" 86400 0 "$BOOT" text keyframes >/dev/null
records=$( ("$BUILD/ctl/frctl" --store "$T/store" status --json || true) | jq .store.records)
cat >"$T/rules.conf" <<CONF
sources = { syscall = { enabled = true; }; };
triggers = { rules = (
  { name = "slow-write"; condition = "syscall_latency"; threshold = "100ms"; syscalls = [ "write" ]; cooldown = "10s"; }
); };
CONF
machine
"$BUILD/ctl/frctl" --config "$T/rules.conf" --store "$T/store" rules test --json >"$T/tried.json"
counts=$(jq -c '.rules[0] | {fired, joined, suppressed}' "$T/tried.json")
runs=
for _ in $(seq "$REPS"); do
	runs+="$(secs "$BUILD/ctl/frctl" --config "$T/rules.conf" --store "$T/store" rules test) "
done
m=$(med "$runs")
echo "rules test over 24 h: $records records in $((bytes >> 20)) MiB of chunks: $m s ($(spr "$runs")), $(calc "$records / $m / 1e6") M records/s; $counts"
result "rules test over a day of store" s "$m" null "-" null "< 30 s" "$(le "$m" 30)" \
	"{\"records\":$records,\"chunk_bytes\":$bytes,\"runs_s\":\"$runs\",\"outcomes\":$counts}"
