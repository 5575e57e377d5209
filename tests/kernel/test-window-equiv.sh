#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# One window reader, read in different ways, says the same thing about a
# real recording (issue 32): the shipped configuration records a busy few
# seconds (samples with stacks, execs, forks, exits, syscalls, metrics,
# keyframes); the daemon stops, and over the store:
#   - every output of dump and report read in the default slices is the
#     same bytes read in slices of one chunk each (every chunk's start a
#     slice boundary) and of a few (FRCTL_SLICE_BYTES);
#   - dump --format json of the window is its parts dumped end to end
#     (each part finds its own keyframe and context chunks again);
#   - the records report counts (whole window) are the records dump
#     prints (streamed);
#   - dump and report of a bundle of the window are those of the store.
# tests/integration/test-window-golden.sh holds the outputs byte for byte
# on a fixed store.
#   test-window-equiv.sh BUILD_DIR FR_SPIN FR_EXEC_STORM
BUILD=$1
SPIN=$(readlink -f "$2")
STORM=$(readlink -f "$3")
. "$(dirname "$0")/lib.sh"
# the shipped configuration, its sockets and textfile the test's own
CONF="$T/fr.conf"
sed -e "s|/run/flightrec/control.sock|$T/control.sock|" \
	-e "s|/var/lib/prometheus/node-exporter/flightrec.prom|$T/flightrec.prom|" \
	"$(dirname "$0")/../../conf/flightrec.conf" >"$CONF"
export TZ=UTC

start_daemon "$CONF"
"$SPIN" 2 >/dev/null
"$STORM" 200 >/dev/null
sleep 2
stop_daemon
F=("$FRCTL" --config "$CONF" --store "$T/store")

"${F[@]}" dump -q --format json >"$T/whole.json"
first=$(head -1 "$T/whole.json" | jq -r .time)
last=$(tail -1 "$T/whole.json" | jq -r .time)
[ -n "$first" ] && [ "$first" != "$last" ] || fail "the recording is empty"
# a window that starts after the first keyframe: its processes are named
# from the keyframe before it and the execs between
SUB=(--since "$(date -u -d "$first + 1.5 sec" +%Y-%m-%dT%H:%M:%S.%NZ)" --until "$last")

n=0
for w in all sub; do
	A=(-q --no-debuginfod)
	[ $w = sub ] && A+=("${SUB[@]}")
	for o in "dump --format text" "dump --format json" "dump --format folded" "dump --format perfetto" \
		"report --format text" "report --format html"; do
		# shellcheck disable=SC2086 # $o is the verb and its format
		"${F[@]}" $o "${A[@]}" >"$T/default" || fail "frctl $o failed"
		[ -s "$T/default" ] || fail "frctl $o printed nothing"
		for bytes in 1 30000; do
			# shellcheck disable=SC2086
			FRCTL_SLICE_BYTES=$bytes "${F[@]}" $o "${A[@]}" >"$T/sliced" || fail "frctl $o failed"
			cmp -s "$T/default" "$T/sliced" || fail "frctl $o ($w) read in slices of $bytes bytes differs"
		done
		n=$((n + 1))
	done
done
ok "$n outputs of dump and report the same bytes in slices of one chunk, of a few, and the default"

: >"$T/parts.json"
edges=("$first")
for s in 0.7 1.9 2.000000001 3.3; do
	edges+=("$(date -u -d "$first + $s sec" +%Y-%m-%dT%H:%M:%S.%NZ)")
done
edges+=("$(date -u -d "$last + 1 sec" +%Y-%m-%dT%H:%M:%S.%NZ)")
for ((i = 0; i + 1 < ${#edges[@]}; i++)); do
	until=$(date -u -d "${edges[$((i + 1))]} - 0.000000001 sec" +%Y-%m-%dT%H:%M:%S.%NZ)
	"${F[@]}" dump -q --since "${edges[$i]}" --until "$until" --format json >>"$T/parts.json"
done
cmp -s "$T/whole.json" "$T/parts.json" || fail "the window dumped whole and in $((${#edges[@]} - 1)) parts differ"
ok "the window ($(wc -l <"$T/whole.json") records) is its $((${#edges[@]} - 1)) parts end to end"

# report reads the window whole, dump streams it: the same records
counted=$("${F[@]}" report -q | sed -n 's/^Window: .*, \([0-9]*\) records$/\1/p')
dumped=$(grep -vc '"type":"\(metrics\|gap\|trigger\)"' "$T/whole.json" || true)
all=$(wc -l <"$T/whole.json")
[ -n "$counted" ] || fail "report printed no record count"
[ "$counted" = "$all" ] || [ "$counted" = "$dumped" ] ||
	fail "report counts $counted records, dump prints $all ($dumped without metrics, gaps and triggers)"
ok "report counts the $counted records dump prints"

cd "$T"
"${F[@]}" dump -q "${SUB[@]}" -o sub.fri
"${F[@]}" dump -q "${SUB[@]}" --format json >"$T/sub.json"
"$FRCTL" dump -q --input sub.fri --format json >"$T/bundle.json"
cmp -s "$T/sub.json" "$T/bundle.json" || fail "dump of a bundle differs from dump of its window"
ok "dump of a bundle of the window is dump of the window"
