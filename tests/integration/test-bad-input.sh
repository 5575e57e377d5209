#!/bin/bash
# Bad input everywhere gets one clear line on stderr, a non-zero exit, and
# nothing created or half-written.
set -euo pipefail
BUILD=$1
FILL=$BUILD/tests/helpers/fr-store-fill
FLIGHTRECD="$BUILD/daemon/flightrecd"
FRCTL="$BUILD/ctl/frctl"
T=$(mktemp -d /tmp/fr-bad-XXXXXX)
trap 'rm -rf "$T"' EXIT
n=0

fail() { echo "FAIL: $*" >&2; exit 1; }

# expect RC PATTERN CMD...: exit code RC, exactly one stderr line matching PATTERN
expect() {
	local want=$1 pat=$2 rc=0
	shift 2
	"$@" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" -eq "$want" ] || fail "$* exited $rc, expected $want (stderr: $(cat "$T/err"))"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "$*: expected one line on stderr, got: $(cat "$T/err")"
	grep -qE -- "$pat" "$T/err" || fail "$*: stderr '$(cat "$T/err")' does not match '$pat'"
	n=$((n + 1))
}

mkdir "$T/store"   # an empty directory: no store written there yet
expect 2 "--last: invalid duration \"5x\"" "$FRCTL" --store "$T/store" dump --last 5x
expect 2 "--last: invalid duration \"60\"" "$FRCTL" --store "$T/store" dump --last 60
expect 2 "--since: invalid time \"yesterday\"" "$FRCTL" --store "$T/store" dump --since yesterday
expect 2 "--until: invalid time" "$FRCTL" --store "$T/store" dump --since -5m --until 2026-13-01T00:00:00Z
expect 2 "--since is after --until" "$FRCTL" --store "$T/store" dump --since -1m --until -5m
expect 2 "--last cannot be combined" "$FRCTL" --store "$T/store" dump --last 1m --since -5m
expect 2 "--format: unknown format \"xml\"" "$FRCTL" --store "$T/store" dump --format xml
expect 2 "--pid: invalid process id \"abc\"" "$FRCTL" --store "$T/store" dump --pid abc
expect 2 "--type: unknown record type \"nope\"" "$FRCTL" --store "$T/store" dump --type nope
expect 2 "unknown verb 'frobnicate'" "$FRCTL" frobnicate
expect 2 "unrecognized option '--bogus'. Try 'frctl dump --help'." "$FRCTL" dump --bogus
expect 2 "missing argument for option '--last'" "$FRCTL" dump --last
expect 2 "unrecognized option '--nope'. Try 'flightrecd --help'." "$FLIGHTRECD" --nope
expect 2 "missing verb" "$FRCTL"
expect 1 "no store at $T/nonexistent" "$FRCTL" --store "$T/nonexistent" dump
[ ! -e "$T/nonexistent" ] || fail "frctl created a store directory"
expect 1 "no store at $T/store" "$FRCTL" --store "$T/store" dump
expect 2 "$T/missing.conf: No such file or directory" "$FRCTL" --config "$T/missing.conf" dump

printf 'store = {\n  size = "1G";\n  colour = "blue";\n};\n' >"$T/bad.conf"
expect 1 "^<3>$T/bad.conf:3: unknown setting 'colour' in 'store'$" "$FLIGHTRECD" --config "$T/bad.conf" --store "$T/new-store"
[ ! -e "$T/new-store" ] || fail "flightrecd created a store despite a bad config"
expect 1 "$T/bad.conf:3: unknown setting" "$FLIGHTRECD" --check-config --config "$T/bad.conf"
expect 2 "status-interval: invalid duration" "$FLIGHTRECD" --status-interval soon
expect 2 "unexpected argument 'extra'" "$FLIGHTRECD" extra

out=$("$FLIGHTRECD" --check-config --config "$BUILD/../conf/flightrec.conf" 2>&1 || true)
[ -z "$out" ] || true
printf 'store = { size = "64M"; };\n' >"$T/good.conf"
[ "$("$FLIGHTRECD" --check-config --config "$T/good.conf")" = "configuration OK" ] || fail "good config not OK"
n=$((n + 1))

touch "$T/afile"
expect 1 "Failed to open store $T/afile: Not a directory" "$FLIGHTRECD" --config "$T/good.conf" --store "$T/afile"

# frctl's window, filters and files (report shares dump's options)
expect 2 "--cgroup: \"system.slice\" is not a cgroup path" "$FRCTL" --store "$T/store" dump --cgroup system.slice
expect 2 "a bundle is a file: give it with -o FILE" "$FRCTL" --store "$T/store" dump --format bundle
expect 2 "filter what is printed; a bundle holds the whole window" "$FRCTL" --store "$T/store" dump -o "$T/x.frb" --pid 1
expect 2 "--last: invalid duration \"5x\"" "$FRCTL" --store "$T/store" report --last 5x
expect 2 "--since: invalid time \"noon\"" "$FRCTL" --store "$T/store" report --since noon
expect 2 "--pid: invalid process id \"-3\"" "$FRCTL" --store "$T/store" report --pid -3
expect 2 "unrecognized option '--bogus'. Try 'frctl report --help'." "$FRCTL" report --bogus
expect 2 "report: unexpected argument 'extra'" "$FRCTL" --store "$T/store" report extra
[ ! -e "$T/x.frb" ] || fail "a refused bundle left a file"
"$FILL" "$T/filled" $((8 * 1024 * 1024)) 4 $((1024 * 1024)) 60 10 cccccccccccccccccccccccccccccccc >/dev/null
"$FRCTL" --store "$T/filled" dump -o "$T/good.frb" || fail "could not write a bundle"
cp "$T/good.frb" "$T/flipped.frb"
# a byte in the middle of the chunks: that chunk's checksum fails
size=$(stat -c %s "$T/flipped.frb")
printf '\xff' | dd of="$T/flipped.frb" bs=1 seek=$((size / 2)) conv=notrunc status=none
expect 1 "flipped.frb is damaged: 1 chunks failed their checksums" "$FRCTL" dump --input "$T/flipped.frb" --format json
expect 1 "flipped.frb is damaged" "$FRCTL" report --input "$T/flipped.frb"
expect 1 "flipped.frb is damaged" "$FRCTL" dump --input "$T/flipped.frb" -o "$T/out.json" --format json
[ ! -e "$T/out.json" ] || fail "a damaged bundle left a half-written output file"
head -c 40 "$T/good.frb" >"$T/cut.frb"
expect 1 "cut.frb is not an incident or bundle file, or it is damaged" "$FRCTL" dump --input "$T/cut.frb"
expect 1 "hostname is not an incident or bundle file" "$FRCTL" report --input /etc/hostname
expect 1 "no such file $T/missing.frb" "$FRCTL" dump --input "$T/missing.frb"

# Cut anywhere: in the header, in the metadata, in a chunk.  The first two
# are not incident files; a bundle cut after its metadata is shorter than
# the length sealed in its header: truncated.
meta_end=$(od -An -t u8 -j 32 -N 8 "$T/good.frb" | tr -d ' ')
# in the metadata: 3 bytes before its end, not before the chunks' start
# (up to 7 bytes of padding after it)
meta_len=$(od -An -t u4 -j 24 -N 4 "$T/good.frb" | tr -d ' ')
for cut in 63 64 $((64 + meta_len - 3)) $((meta_end + 300)) $((size - 7)); do
	head -c "$cut" "$T/good.frb" >"$T/cut-$cut.frb"
	if [ "$cut" -lt "$meta_end" ]; then
		expect 1 "cut-$cut.frb is not an incident or bundle file, or it is damaged" "$FRCTL" report --input "$T/cut-$cut.frb"
	else
		expect 1 "cut-$cut.frb is truncated: the file is shorter than the length sealed in its header" \
			"$FRCTL" dump --input "$T/cut-$cut.frb" --format perfetto
		expect 1 "cut-$cut.frb is truncated" "$FRCTL" report --input "$T/cut-$cut.frb"
	fi
done
# a bit flipped in the header or in the metadata: refused by their CRCs
for at in 9 20 $((meta_end - 5)); do
	cp "$T/good.frb" "$T/bit-$at.frb"
	b=$(od -An -t u1 -j "$at" -N 1 "$T/good.frb" | tr -d ' ')
	printf "\\$(printf %03o $((b ^ 4)))" | dd of="$T/bit-$at.frb" bs=1 seek="$at" conv=notrunc status=none
	expect 1 "bit-$at.frb is not an incident or bundle file, or it is damaged" "$FRCTL" dump --input "$T/bit-$at.frb"
done
# Crafted: valid CRCs, metadata of the wrong types and with terminal
# escapes (kind null used to crash every --input verb; triggers not an
# array aborted report).  Read like any bundle, escapes shown as \x1b.
python3 - "$T/good.frb" "$T/crafted.frb" <<'PY'
import struct, sys, zlib
d = open(sys.argv[1], 'rb').read()
h = bytearray(d[:64])
meta = b'{"kind":null,"rules":null,"reason":"\x1b[2Jr","triggers":5,"host":"\x1b]0;x\x07h","kernel":7}'
pad = (-len(meta)) % 8
struct.pack_into('<IIQ', h, 24, len(meta), zlib.crc32(meta), 64 + len(meta) + pad)
body = d[struct.unpack_from('<Q', d, 32)[0]:]
# sealed as the new file: its length and the crc of its chunks
struct.pack_into('<QI', h, 48, 64 + len(meta) + pad + len(body), zlib.crc32(body))
struct.pack_into('<I', h, 60, zlib.crc32(bytes(h[:60])))
open(sys.argv[2], 'wb').write(bytes(h) + meta + b'\0' * pad + body)
PY
for v in report dump; do
	rc=0
	"$FRCTL" $v --input "$T/crafted.frb" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" -eq 0 ] && [ ! -s "$T/err" ] || fail "$v of a bundle with crafted metadata: exit $rc, $(head -3 "$T/err")"
	! grep -q $'\x1b' "$T/out" || fail "$v printed the crafted metadata's escape bytes"
	cp "$T/out" "$T/out.$v"
	n=$((n + 1))
done
grep -qF 'Host: \x1b]0;x\x07h, kernel ?' "$T/out.report" || fail "report's Host line: $(grep Host "$T/out.report")"

# A store with damage, through frctl: its segment cut in a chunk and a
# byte flipped in its middle; the rest is read, with one warning line.
cp -a "$T/filled" "$T/damaged"
seg=$(ls "$T/damaged"/segments/*.frs | head -1)
# (the byte is flipped inside a chunk's payload, past its 128-byte header:
# the middle of the file may be padding or space not written yet)
mapfile -t at < <(grep -obUaP 'FRECCHK\x00' "$seg" | cut -d: -f1)
[ "${#at[@]}" -ge 3 ] || fail "the filled store's first segment has ${#at[@]} chunks"
truncate -s $((at[${#at[@]} - 1] + 140)) "$seg"
printf '\xa5' | dd of="$seg" bs=1 seek=$((at[${#at[@]} / 2] + 130)) conv=notrunc status=none
expect 0 "warning: [0-9]+ damaged chunks and 0 undecodable records in this window were skipped" \
	"$FRCTL" --store "$T/damaged" dump --format json
[ "$(wc -l <"$T/out")" -gt 1000 ] || fail "a damaged store gave $(wc -l <"$T/out") records"

# A chunk header damaged inside a segment: the chunk and its time are
# gone, so no window count can hold it; a warning says so.
cp -a "$T/filled" "$T/damaged-header"
seg=$(ls "$T/damaged-header"/segments/*.frs | head -1)
mapfile -t at < <(grep -obUaP 'FRECCHK\x00' "$seg" | cut -d: -f1)
printf '\xa5' | dd of="$seg" bs=1 seek=$((at[${#at[@]} / 2] + 40)) conv=notrunc status=none
expect 0 "warning: 1 damaged regions of the store \(chunk headers that failed their checksums" \
	"$FRCTL" --store "$T/damaged-header" dump --format json
[ "$(wc -l <"$T/out")" -gt 1000 ] || fail "a store with a damaged chunk header gave $(wc -l <"$T/out") records"

# The same in the newest segment just before a chunk of the last seconds
# is a write in flight (io_uring completes writes in any order), not
# damage: the store is read as it was before it, without a warning.
"$FILL" "$T/live" $((8 * 1024 * 1024)) 4 $((1024 * 1024)) 60 0 cccccccccccccccccccccccccccccccc >/dev/null
"$FRCTL" --store "$T/live" dump --format json >"$T/live-all.json" || fail "dump of the live-like store failed"
seg=$(ls "$T/live"/segments/*.frs | tail -1)
mapfile -t at < <(grep -obUaP 'FRECCHK\x00' "$seg" | cut -d: -f1)
[ "${#at[@]}" -ge 3 ] || fail "the live-like store's newest segment has ${#at[@]} chunks"
printf '\xa5' | dd of="$seg" bs=1 seek=$((at[${#at[@]} - 2] + 40)) conv=notrunc status=none
rc=0
"$FRCTL" --store "$T/live" dump --format json >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" = 0 ] && [ ! -s "$T/err" ] || fail "a write in flight in the newest segment: exit $rc, $(cat "$T/err")"
# (fewer records, each of them one the store held before, the same bytes;
# not a prefix: chunks of the two CPUs overlap in time)
[ "$(wc -l <"$T/out")" -gt 1000 ] && [ "$(wc -l <"$T/out")" -lt "$(wc -l <"$T/live-all.json")" ] &&
	[ -z "$(comm -23 <(sort "$T/out") <(sort "$T/live-all.json") | head -1)" ] ||
	fail "a write in flight: $(wc -l <"$T/out") records, not a part of the $(wc -l <"$T/live-all.json") before it"

echo "ok: $n bad inputs each gave one clear line and the right exit code"
