#!/bin/bash
# Benchmark (not a test): `frctl dump --last 60s` on a full store, where
# finding the window costs more than printing it.  A 1 GiB store of 16
# segments covering a week, with a keyframe every 30 s as flightrecd
# writes them, is filled through the real writer (fr-store-fill), ending
# now.  Then `frctl dump --since/--until` the last 60 s of it (fixed times
# so every run prints the same records) --format json: cold (after sync +
# drop_caches) and warm, REPS runs each, medians and spreads of the wall
# time, and the --stats line (bytes read, segments skipped).
# BASE=OTHER_BUILD_DIR also times that build's frctl the same way,
# interleaved (a before/after), and says whether its output is the same.
# No peer: perf has no store to search (print it).
#   tests/bench/dump-full-store.sh BUILD_DIR [REPS]
BUILD=${1:-build}
REPS=${2:-5}
. "$(dirname "$0")/lib.sh"
[ "$QUICK" = 1 ] && REPS=2
GIB=$((1024 * 1024 * 1024))

"$BUILD/tests/helpers/fr-store-fill" "$T/store" $GIB 16 $GIB 604800 0 0123456789abcdef0123456789abcdef keyframes >/dev/null
until_=$(date -u +%Y-%m-%dT%H:%M:%SZ)
since_=$(date -u -d "$until_ - 60 sec" +%Y-%m-%dT%H:%M:%SZ)

builds=("$BUILD")
[ -n "${BASE:-}" ] && builds+=("$BASE")
declare -A cold warm
dump() { "$1/ctl/frctl" --store "$T/store" dump --since "$since_" --until "$until_" --format json "${@:2}"; }
for i in $(seq "$REPS"); do
	for b in "${builds[@]}"; do
		sync
		echo 3 >/proc/sys/vm/drop_caches
		cold[$b]+="$(secs dump "$b") "
		warm[$b]+="$(secs dump "$b") "
	done
done

machine
echo "store: $(du -sh "$T/store/segments" | cut -f1) in 16 segments over 7 days, a keyframe every 30 s; window $since_ .. $until_"
for b in "${builds[@]}"; do
	lines=$(dump "$b" | wc -l)
	stats=$(dump "$b" --stats 2>&1 >/dev/null | tail -1)
	printf '%s: %s lines; cold %s s (%s), warm %s s (%s)\n  %s\n' "$b" "$lines" "$(med "${cold[$b]}")" \
		"$(spr "${cold[$b]}")" "$(med "${warm[$b]}")" "$(spr "${warm[$b]}")" "$stats"
done
if [ -n "${BASE:-}" ]; then
	if cmp -s <(dump "$BUILD") <(dump "$BASE"); then echo "output: the same bytes"; else echo "output: DIFFERS"; fi
fi
skipped=$(dump "$BUILD" --stats 2>&1 >/dev/null | sed -n 's/.*; \([0-9]*\) of \([0-9]*\) segments skipped.*/\1 of \2/p')
for c in cold warm; do
	declare -n v=$c
	result "frctl dump --last 60s of a full 1 GiB week-long store, $c cache" "s wall" "$(med "${v[$BUILD]}")" null "-" \
		null "print it" null "$(jq -cn --arg s "$skipped" '{segments_skipped: $s}')"
	unset -n v
done
