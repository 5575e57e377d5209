#!/bin/bash
# Seeds for the fuzz corpora from a real recording (issue 49), as root:
# flightrecd with the shipped sources records about a second of a small
# workload (execs, a SIGSEGV with its stacks, a read blocked off CPU, a
# Python loop, CPU samples), then
#   - segment/real-segment: the store's first segment file, cut after its
#     last chunk (what follows is the preallocated zeros)
#   - incident/real-incident-*: a manual freeze of the last second
#   - incident/real-bundle-*: frctl dump --last 1s -o, the bundle format
# written into tests/fuzz/corpus (replacing the last real seeds).  Small on
# purpose: libFuzzer's speed falls with the size of its inputs.
#   tests/fuzz/real-seeds.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
SRC=$PWD
BUILD=$(readlink -f "${1:-build}")
. tests/kernel/lib.sh
HELPERS=$BUILD/tests/helpers

cat >"$T/fr.conf" <<CONF
store = { size = "16M"; segments = 4; sync_interval = "200ms"; keyframe_interval = "1s"; };
triggers = { rules = ( { name = "manual"; condition = "manual"; before = "1s"; after = "0s"; } ); };
CONF
start_daemon "$T/fr.conf"
sleep 0.5
# the workload: each kind of record a reader decodes
(cd "$T" && "$HELPERS/fr-segv" >/dev/null 2>&1) 2>/dev/null || true # its crash, expected
(cd "$T" && "$HELPERS/fr-wait" pipe 300 >/dev/null) || fail "fr-wait failed"
/usr/bin/python3 -c 'import time
def spin(t):
    while time.time() < t: pass
spin(time.time() + 0.3)'
for _ in 1 2 3; do /bin/true; done
wait_for_record '.type == "signal"'
"$FRCTL" --config "$T/fr.conf" --store "$T/store" freeze --reason "fuzz seed" >/dev/null || fail "freeze failed"
"$FRCTL" --store "$T/store" dump --last 1s -o "$T/bundle.frb" || fail "bundle failed"
for _ in $(seq 50); do
	ls "$T/store/incidents/"*.fri >/dev/null 2>&1 && break
	sleep 0.1
done
stop_daemon

inc=$(ls "$T/store/incidents/"*.fri | head -1)
[ -n "$inc" ] || fail "no incident written"
# fuzz-incident picks its reader by the input's length (7 verbs and
# formats, with and without --redact): each real file is padded with zeros
# (a reader stops at the length its header says) to each of the 7, the
# incident with --redact on every other one and the bundle on the rest, so
# every reader starts from a real file of each kind
rm -f "$SRC"/tests/fuzz/corpus/incident/real-*
/usr/bin/python3 - "$inc" "$T/bundle.frb" "$SRC/tests/fuzz/corpus/incident" <<'PY'
import sys
names = ["text", "json", "perfetto", "folded", "html", "pprof", "report"]
for k, (src, kind) in enumerate(((sys.argv[1], "incident"), (sys.argv[2], "bundle"))):
    b = open(src, "rb").read()
    for want in (v + 7 * ((v + k) % 2) for v in range(7)):
        pad = next(p for p in range(14) if (len(b) + p) % 7 == want % 7 and (len(b) + p) // 7 % 2 == want // 7)
        tag = names[want % 7] + ("-redact" if want // 7 else "")
        open(f"{sys.argv[3]}/real-{kind}-{tag}", "wb").write(b + bytes(pad))
PY
# the segment up to its last byte that is not zero, to a 4 KiB boundary
seg=$T/store/segments/0000.frs
used=$(/usr/bin/python3 -c 'import sys
b = open(sys.argv[1], "rb").read()
print((len(b.rstrip(b"\0")) + 4095) // 4096 * 4096)' "$seg")
head -c "$used" "$seg" >"$SRC/tests/fuzz/corpus/segment/real-segment"
echo "segment/real-segment: $(stat -c %s "$SRC/tests/fuzz/corpus/segment/real-segment") bytes"
echo "incident/real-*: $(ls "$SRC"/tests/fuzz/corpus/incident/real-* | wc -l) files, $(du -cb "$SRC"/tests/fuzz/corpus/incident/real-* | tail -1 | cut -f1) bytes"
