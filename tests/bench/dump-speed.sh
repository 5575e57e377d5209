#!/bin/bash
# Benchmark (not a test): how fast frctl prints a window, next to `zstd -d`
# decompressing the very chunk payloads frctl reads for it.  A store of
# 1 GiB is filled with 48 MiB of chunks, about 10 million synthetic records (exec records
# with printable argv, and syscall records) spread over SPAN seconds; the
# window is the last 60 s.  Each command runs REPS times with a warm page
# cache (the first, cold run is printed apart); medians are compared.
# Issue 7's target: printed text at >= 0.5x the speed of zstd -d; issue
# 9's: decode throughput (nothing printed) >= 0.5x.
# BASE=OTHER_BUILD_DIR also times that build's frctl the same way,
# interleaved (a before/after), and says whether its output is the same;
# the store is then filled by BASE's writer, a format both read.
#   tests/bench/dump-speed.sh BUILD_DIR [REPS] [SPAN_S]
BUILD=${1:-build}
REPS=${2:-5}
SPAN=${3:-600}
FRCTL=$BUILD/ctl/frctl
. "$(dirname "$0")/lib.sh"
# secs CMD...: wall seconds of CMD (output discarded)
secs() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null; t1=$(date +%s.%N); awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }'; }

"${BASE:-$BUILD}/tests/helpers/fr-store-fill" "$T/store" $((1024 * 1024 * 1024)) 16 $((48 * 1024 * 1024)) "$SPAN" 0 \
	dddddddddddddddddddddddddddddddd text >/dev/null
total=$( ("$FRCTL" --store "$T/store" status --json || true) | jq .store.records)
now=$(date +%s%N)
since=$((now - 60 * 1000000000))
"$BUILD/tests/bench/chunk-payloads" "$T/store" "$since" "$now" >"$T/payloads.zst" 2>"$T/payloads.log"
# the same window for every command: absolute times
W=(--since "$(date -u -d @$((since / 1000000000)) +%Y-%m-%dT%H:%M:%SZ)" --until "$(date -u -d @$((now / 1000000000 + 1)) +%Y-%m-%dT%H:%M:%SZ)")
records=$("$FRCTL" --store "$T/store" dump "${W[@]}" --format json | wc -l)
raw=$(zstd -dc "$T/payloads.zst" | wc -c)

sync; echo 3 >/proc/sys/vm/drop_caches
cold_json=$(secs "$FRCTL" --store "$T/store" dump "${W[@]}" --format json)
sync; echo 3 >/proc/sys/vm/drop_caches
cold_zstd=$(secs zstd -dc "$T/payloads.zst")
declare -A runs
for i in $(seq "$REPS"); do
	runs[zstd]+="$(secs zstd -dc "$T/payloads.zst") "
	runs[json]+="$(secs "$FRCTL" --store "$T/store" dump "${W[@]}" --format json) "
	runs[text]+="$(secs "$FRCTL" --store "$T/store" dump "${W[@]}" --format text) "
	runs[decode]+="$(secs "$FRCTL" --store "$T/store" dump "${W[@]}" --type mark) "
	if [ -n "${BASE:-}" ]; then
		runs[base_json]+="$(secs "$BASE/ctl/frctl" --store "$T/store" dump "${W[@]}" --format json) "
		runs[base_text]+="$(secs "$BASE/ctl/frctl" --store "$T/store" dump "${W[@]}" --format text) "
		runs[base_decode]+="$(secs "$BASE/ctl/frctl" --store "$T/store" dump "${W[@]}" --type mark) "
	fi
done
machine
echo "store: $total records over ${SPAN}s; window: last 60 s, $records records, $(cat "$T/payloads.log" | sed 's/chunk-payloads: //'), $raw bytes decoded"
z=$(tr ' ' '\n' <<<"${runs[zstd]}" | grep . | median)
printf '%-34s %8s %14s %12s %10s\n' command "median s" "spread s" "records/s" "vs zstd -d"
for c in zstd decode text json; do
	m=$(tr ' ' '\n' <<<"${runs[$c]}" | grep . | median)
	sp=$(tr ' ' '\n' <<<"${runs[$c]}" | grep . | spread)
	case $c in
	zstd) label="zstd -d (the payloads)" ;;
	decode) label="frctl dump, nothing printed" ;;
	text) label="frctl dump --format text" ;;
	json) label="frctl dump --format json" ;;
	esac
	ratio=$(awk -v z="$z" -v m="$m" 'BEGIN { printf "%.3f", z / m }')
	printf '%-34s %8s %14s %12.0f %9.2fx\n' "$label" "$m" "$sp" "$(awk -v n="$records" -v m="$m" 'BEGIN { print n / m }')" \
		"$ratio"
	met=$(awk -v r="$ratio" 'BEGIN { print (r >= 0.5) ? "true" : "false" }')
	case $c in
	decode) result "decode throughput" "s for the window" "$m" "$z" "zstd -d" "$ratio" ">= 0.5x zstd -d speed" "$met" \
		"{\"records\": $records}" ;;
	text) result "dump --format text speed" "s for the window" "$m" "$z" "zstd -d" "$ratio" ">= 0.5x zstd -d speed" "$met" \
		"{\"records\": $records}" ;;
	esac
done
echo "cold cache: frctl dump --format json ${cold_json}s, zstd -d ${cold_zstd}s"
if [ -n "${BASE:-}" ]; then
	echo "before/after: $BASE's frctl (before) and $BUILD's (after), interleaved, medians"
	for c in decode text json; do
		a=$(tr ' ' '\n' <<<"${runs[$c]}" | grep . | median)
		b=$(tr ' ' '\n' <<<"${runs[base_$c]}" | grep . | median)
		printf '  %-7s before %8ss  after %8ss  after/before %.3f\n' "$c" "$b" "$a" "$(awk -v a="$a" -v b="$b" 'BEGIN { print a / b }')"
	done
	if cmp -s <("$FRCTL" --store "$T/store" dump "${W[@]}" --format json) \
		<("$BASE/ctl/frctl" --store "$T/store" dump "${W[@]}" --format json); then
		echo "output: the same bytes"
	else
		echo "output: DIFFERS"
	fi
fi
