#!/bin/bash
# Benchmark (not a test): how long an incident takes to become durable once
# its window is complete (drain the rings, close chunks, sync the store,
# select and copy the window's chunks, fsync, rename, fsync the directory),
# over N manual freezes; p50/p99 printed next to fio's fdatasync latency
# on the same filesystem.
#   tests/bench/incident-latency.sh BUILD_DIR [N]
set -euo pipefail
BUILD=${1:-build}
N=${2:-40}
T=$(mktemp -d "${TMPDIR:-/var/tmp}/fr-bench-XXXXXX")
DPID=
cleanup() { [ -n "$DPID" ] && kill "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
command -v fio >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fio >/dev/null

cat >"$T/fr.conf" <<CONF
triggers = { rules = ( { name = "manual"; condition = "manual"; before = "2s"; after = "0s"; } ); };
CONF
"$BUILD/daemon/flightrecd" --config "$T/fr.conf" --store "$T/store" >"$T/log" 2>&1 &
DPID=$!
for _ in $(seq 50); do "$BUILD/ctl/frctl" --store "$T/store" status >/dev/null 2>&1 && break; sleep 0.1; done
for i in $(seq "$N"); do
	"$BUILD/ctl/frctl" --store "$T/store" freeze --reason "bench $i" >/dev/null
	for _ in $(seq 100); do [ "$(grep -c 'captured' "$T/log")" -ge "$i" ] && break; sleep 0.05; done
	sleep 0.1   # distinct windows: no coalescing
done
kill "$DPID"; wait "$DPID" || true; DPID=

pct() { sort -n | awk -v p="$1" '{a[NR]=$1} END {i=int(NR*p/100+0.999); if (i<1) i=1; print a[i]}'; }
lat=$(sed -n 's/.*durable \([0-9.]*\) ms after its window.*/\1/p' "$T/log")
echo "filesystem: $(df -T "$T" | awk 'NR==2 {print $2" on "$1}'), kernel $(uname -r)"
echo "incident durable after its window (n=$(wc -l <<<"$lat")): p50 $(pct 50 <<<"$lat") ms, p99 $(pct 99 <<<"$lat") ms"
fio --name=fdatasync --directory="$T" --rw=write --bs=4k --size=16M --fdatasync=1 --output-format=json >"$T/fio.json" 2>/dev/null
python3 - "$T/fio.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]["sync"]["lat_ns"]["percentile"]
print("fio write+fdatasync (4k): p50 %.3f ms, p99 %.3f ms" % (j["50.000000"] / 1e6, j["99.000000"] / 1e6))
PY
