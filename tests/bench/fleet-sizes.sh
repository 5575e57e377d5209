#!/bin/bash
# What one host hands to the fleet's systems, for FLEET.md: the shipped
# default configuration records the busy machine (busy_for: perf bench
# sched messaging in a loop + stress-ng) for DURATION seconds (default
# 180), then this measures, on what the daemon really wrote:
#   - the store: bytes written per second (what stays on the host);
#   - the Prometheus textfile: bytes, series, and the daemon's CPU per
#     write (status .textfile.cpu_ns / written);
#   - an incident: a real SIGSEGV under the default crash rule, its bytes;
#     and a manual freeze (frctl freeze) of the default manual rule;
#   - profiles: frctl dump --last 60s --format pprof (and --offcpu), the
#     60 s HTML report, a 60 s bundle.
# Usage: fleet-sizes.sh BUILD [DURATION]
BUILD=$1
DURATION=${2:-180}
. "$(dirname "$0")/lib.sh"
command -v stress-ng >/dev/null || need_pkg stress-ng stress-ng
FRCTL=("$BUILD/ctl/frctl" --store "$T/store" --socket "$T/control.sock")

mkdir -p "$T/prom"
cat >"$T/fr.conf" <<CONF
prometheus = { textfile = "$T/prom/flightrec.prom"; };
CONF
start_flightrecd "$T/fr.conf"
busy_for "$DURATION"
st=$(frstatus)
bytes=$(jq '.store.bytes_written' <<<"$st")
up=$(jq '.uptime_s' <<<"$st")
rate=$(calc "$bytes / $up")
echo "store: $bytes bytes in $up s: $(calc "$rate / 1000") kB/s, $(calc "$rate * 86400 / 1e9") GB/day written (the ring keeps the newest store.size)"

tf="$T/prom/flightrec.prom"
series=$(grep -vc '^#' "$tf")
writes=$(jq '.textfile.written' <<<"$st")
cpu_ns=$(jq '.textfile.cpu_ns' <<<"$st")
echo "textfile: $(stat -c %s "$tf") bytes, $series series ($(nproc) CPUs), $(calc "$cpu_ns / $writes / 1000") µs of daemon CPU per write ($writes writes)"

# a real crash, frozen by the default crash rule
cat >"$T/segv.c" <<'C'
int main(void) { volatile int *p = 0; return *p; }
C
cc -o "$T/segv" "$T/segv.c"
"$T/segv" 2>/dev/null || true
sleep 12 # the crash rule's window ends 10 s after the signal
"${FRCTL[@]}" freeze --reason fleet-sizes
sleep 31 # the manual rule: 30 s after
for _ in $(seq 60); do
	"${FRCTL[@]}" incidents --json >"$T/incidents.json"
	[ "$(jq length "$T/incidents.json")" -ge 2 ] && break
	sleep 1
done
grep -i incident "$T/daemon.log" || true
jq -r '.[] | "incident \(.rules | join(",")): \(.bytes) bytes, window \(.start) .. \(.end)"' "$T/incidents.json"

"${FRCTL[@]}" dump --last 60s --format pprof -o "$T/cpu.pb.gz"
"${FRCTL[@]}" dump --last 60s --format pprof --offcpu -o "$T/offcpu.pb.gz"
"${FRCTL[@]}" report --last 60s --format html -o "$T/report.html"
"${FRCTL[@]}" dump --last 60s -o "$T/bundle.frb"
for f in cpu.pb.gz offcpu.pb.gz report.html bundle.frb; do
	echo "60 s window: $f $(stat -c %s "$T/$f") bytes"
done
