#!/bin/bash
# Time index: on a full 1 GiB store covering about a week, with a
# keyframe every 30 s as flightrecd writes them, `frctl dump --last 60s`
# must read (syscall bytes, /proc/self/io rchar, and the reader's own
# count) less than 5 % of the store, and not even walk the chunk headers
# of the segments that end before its keyframe: it walks at most the
# newest three of the 16 (the newest has no successor to describe it, the
# window may reach into the one before, and its keyframe may be in the
# one before that: each segment holds hours).
set -euo pipefail
BUILD=$1
FILL=$2
FRCTL="$BUILD/ctl/frctl"
T=$(mktemp -d /tmp/fr-index-XXXXXX)
# The store lives on a tmpfs of its own: what is measured is what the
# reader asks for, not the disk, and a GiB written to the disk made the
# fill take 229 s once in CI (its fdatasyncs behind earlier tests'
# writeback) where it takes 5 s on a quiet disk.
mount -t tmpfs -o size=1200M tmpfs "$T"
trap 'umount "$T" && rmdir "$T"' EXIT
trap 'exit 143' TERM INT
fail() { echo "FAIL: $*" >&2; exit 1; }

GIB=$((1024 * 1024 * 1024))
# the records end 5 minutes after the fill starts: a fill slower than
# that still leaves records in the last 60 s
"$FILL" "$T/store" $GIB 16 $GIB 604800 -300 0123456789abcdef0123456789abcdef keyframes
store_bytes=$(du -sb "$T/store/segments" | cut -f1)

"$FRCTL" --store "$T/store" dump --last 60s --format json --stats >"$T/dump.json" 2>"$T/stats"
cat "$T/stats"
n=$(wc -l <"$T/dump.json")
[ "$n" -gt 0 ] || fail "no records in the last 60 s of the filled store"
rchar=$(sed -n 's/.*process read \([0-9]*\) bytes (rchar).*/\1/p' "$T/stats")
pct=$(sed -n 's/.*store (\([0-9.]*\)%).*/\1/p' "$T/stats")
[ -n "$rchar" ] && [ -n "$pct" ] || fail "no statistics printed"
awk -v r="$rchar" -v s="$store_bytes" 'BEGIN { exit !(r < 0.05 * s) }' ||
	fail "dump --last 60s read $rchar bytes of a $store_bytes byte store (>= 5 %)"
awk -v p="$pct" 'BEGIN { exit !(p < 5) }' || fail "the reader counted $pct % of the store"
skipped=$(sed -n 's/.*; \([0-9]*\) of 16 segments skipped unread.*/\1/p' "$T/stats")
[ -n "$skipped" ] || fail "no count of skipped segments printed"
[ "$skipped" -ge 13 ] || fail "dump --last 60s walked $((16 - skipped)) of 16 segments, not at most 3"
echo "ok: --last 60s printed $n records after reading $rchar of $store_bytes bytes, $skipped of 16 segments skipped ($(awk -v r="$rchar" -v s="$store_bytes" 'BEGIN { printf "%.3f", 100 * r / s }') %)"
