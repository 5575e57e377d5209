#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The window reader's outputs, byte for byte (issue 32).  fr-store-golden
# writes the same store every time (ties across CPUs, records out of order
# inside chunks, keyframes, stacks, cgroups, hundreds of small chunks: many
# of the reader's slices); every output of dump and report over it, whole
# and over a part of it, from the store and from a bundle cut out of it,
# must hash as tests/integration/window-golden.sha256 says.  Those hashes
# were made by frctl at a7ab838, before the two loaders of a window became
# one: a reader that loses, repeats, reorders or misnames one record, or
# names an executable from the wrong time, changes a hash.  Then a
# structural check that needs no hash: the window dumped whole is the
# concatenation of it dumped in parts (split at nanosecond boundaries,
# each part's keyframe and context chunks found again).  And the outputs
# again with the reader's slices one chunk each (FRCTL_SLICE_BYTES=1),
# every chunk's start a slice boundary, and a few chunks each.
#   test-window-golden.sh BUILD_DIR FR_STORE_GOLDEN [--regenerate]
# --regenerate prints the hash file for the current frctl instead (only
# after a deliberate change of an output format).  The report texts' and
# pages' hashes changed with issue 45's "What changed" (the section, the
# page's script); with --no-baseline the texts are still a7ab838's.
# The store was recorded on "golden-recorder", kernel 6.1.0-golden-amd64
# (fr-store-golden writes its hosts file): the outputs name that machine,
# never the one reading it.  The test runs under another host name (a UTS
# namespace of its own, "golden-reader"), and no machine runs the golden
# kernel release: an output that took either from the reader changes a
# hash, and the bundle's metadata is checked to name both apart.
set -euo pipefail
if [ -z "${FR_GOLDEN_UTS:-}" ]; then
	# shellcheck disable=SC2016 # the inner shell's
	exec env FR_GOLDEN_UTS=1 unshare -u sh -c 'hostname golden-reader && exec "$0" "$@"' "$0" "$@"
fi
BUILD=$1
GEN=$2
FRCTL="$BUILD/ctl/frctl"
HASHES=$(dirname "$0")/window-golden.sha256
T=$(mktemp -d /tmp/fr-golden-XXXXXX)
trap 'rm -rf "$T"' EXIT
# text output is in local time; frames left unnamed must not be looked up
export TZ=UTC
unset DEBUGINFOD_URLS

"$GEN" "$T/store"
cd "$T"
mkdir out
F=("$FRCTL" --store store)
SUB=(--since 2026-01-01T00:00:02.5Z --until 2026-01-01T00:00:04.0005Z)
# out NAME ARGS...: frctl's output (and exit status) to out/NAME
out() {
	local name=$1 rc=0
	shift
	"${F[@]}" "$@" >"out/$name" 2>"out/$name.stderr" || rc=$?
	echo "exit $rc" >>"out/$name.stderr"
}
for w in all sub; do
	A=(-q --no-debuginfod)
	[ $w = sub ] && A+=("${SUB[@]}")
	out $w.dump.text dump "${A[@]}"
	out $w.dump.json dump "${A[@]}" --format json
	out $w.dump.folded dump "${A[@]}" --format folded
	out $w.dump.folded-offcpu dump "${A[@]}" --format folded --offcpu
	out $w.dump.perfetto dump "${A[@]}" --format perfetto
	out $w.dump.pprof dump "${A[@]}" --format pprof -o out/$w.pprof
	out $w.dump.pid dump "${A[@]}" --pid 7 --format json
	out $w.dump.comm dump "${A[@]}" --comm p3
	out $w.dump.cgroup dump "${A[@]}" --cgroup /user.slice --format json
	out $w.dump.type dump "${A[@]}" --type exec --format json
	out $w.report.text report "${A[@]}"
	out $w.report.html report "${A[@]}" --format html
	out $w.bundle dump "${A[@]}" --format bundle -o $w.fri
	out $w.bundle.dump.json dump -q --no-debuginfod --input $w.fri --format json
	out $w.bundle.report.text report -q --no-debuginfod --input $w.fri
done

if [ "${3:-}" = --regenerate ]; then
	(cd out && sha256sum -- *)
	exit 0
fi
fails=0
while read -r sum name; do
	if [ ! -f "out/$name" ]; then
		echo "FAIL: $name was not written"
		fails=$((fails + 1))
	elif [ "$(sha256sum <"out/$name" | cut -d' ' -f1)" != "$sum" ]; then
		echo "FAIL: $name differs from the golden output (frctl ${name//./ }); it begins:"
		head -c 600 "out/$name" | head -5
		fails=$((fails + 1))
	fi
done <"$HASHES"
[ "$(wc -l <"$HASHES")" -ge 60 ] || { echo "FAIL: $HASHES lists too few outputs"; exit 1; }
[ "$fails" = 0 ] || { echo "FAIL: $fails outputs differ"; exit 1; }
echo "ok: $(wc -l <"$HASHES") outputs of dump and report as at a7ab838 (the host lines since issue 40)"

# the bundle names the machine that recorded it, and apart the one that cut it
for w in all sub; do
	/usr/bin/python3 -c '
import json, struct, sys
d = open(sys.argv[1], "rb").read()
print(d[64:64 + struct.unpack_from("<I", d, 24)[0]].decode())' $w.fri >$w.meta
	jq -e --arg me "$(hostname)" --arg kernel "$(uname -r)" '.host == "golden-recorder" and
		.kernel == "6.1.0-golden-amd64" and .boot_id == "601de5704e00112233445566778899aa" and
		.recorded_on == [{boot_id: "601de5704e00112233445566778899aa", host: "golden-recorder",
			kernel: "6.1.0-golden-amd64", kernel_version: "#1 SMP PREEMPT_DYNAMIC Debian 6.1.0-golden",
			machine: "x86_64", machine_id: "0123456789abcdef0123456789abcdef"}] and
		.bundled_on == {host: $me, kernel: $kernel}' $w.meta >/dev/null ||
		{ echo "FAIL: the $w bundle does not name its recording host apart from $(hostname): $(jq -c '{host, kernel, boot_id, recorded_on, bundled_on}' $w.meta)"; exit 1; }
done
[ "$(hostname)" = golden-reader ] || { echo "FAIL: not run under its own host name"; exit 1; }
echo "ok: bundles name golden-recorder (6.1.0-golden-amd64) as the recorder, read and cut on $(hostname) ($(uname -r))"

# the same outputs read in other slices: one chunk each (every chunk's
# start a slice boundary, where records tie), and a few chunks each
golden() { awk -v n="$1" '$2 == n { print $1 }' "$HASHES"; }
for bytes in 1 20000; do
	for name in all.dump.json all.dump.text all.dump.folded all.report.text all.report.html sub.dump.json \
		sub.report.text; do
		w=${name%%.*} verb=${name#*.}; verb=${verb%%.*} fmt=${name##*.}
		A=(-q --no-debuginfod)
		[ $w = sub ] && A+=("${SUB[@]}")
		sum=$(FRCTL_SLICE_BYTES=$bytes "${F[@]}" $verb "${A[@]}" --format $fmt | sha256sum | cut -d' ' -f1)
		[ "$sum" = "$(golden $name)" ] || { echo "FAIL: $name read in slices of $bytes bytes differs"; exit 1; }
	done
done
echo "ok: the same outputs read in slices of one chunk and of a few"

# the window whole = the window in parts, each read on its own
"${F[@]}" dump -q --format json >whole.json
: >parts.json
edges=(2026-01-01T00:00:00Z 2026-01-01T00:00:01.2345Z 2026-01-01T00:00:03.000000001Z
	2026-01-01T00:00:03.0005Z 2026-01-01T00:00:05.999Z 2026-01-01T00:00:07Z)
for ((i = 0; i + 1 < ${#edges[@]}; i++)); do
	since=${edges[$i]}
	# --until is inclusive: the next part starts one nanosecond later
	until=$(date -u -d "${edges[$((i + 1))]} - 0.000000001 sec" +%Y-%m-%dT%H:%M:%S.%NZ)
	"${F[@]}" dump -q --since "$since" --until "$until" --format json >>parts.json
done
[ "$(wc -l <whole.json)" -gt 20000 ] || { echo "FAIL: the whole window has $(wc -l <whole.json) records"; exit 1; }
cmp whole.json parts.json || { echo "FAIL: the window dumped whole and in 5 parts differ"; exit 1; }
echo "ok: the window whole ($(wc -l <whole.json) records) is its 5 parts end to end"
