#!/bin/bash
# The recorder's health in Prometheus (prometheus.textfile), read by the
# real consumers: Debian's prometheus-node-exporter, started here on a
# loopback port as its own user with our directory as its textfile
# directory, serves our metrics, and promtool (Debian's prometheus) finds
# no problem in them.  Then:
#   a. the file is 0644 and replaced by rename (no *.tmp left behind);
#   b. a drop storm (32 KiB rings, the daemon stopped while 300 processes
#      exec) moves flightrec_dropped_records_total, per CPU and source, by
#      exactly what `frctl status --json` says, and the scrape shows it;
#   c. the store's size, retention and the rules' counters are there, and
#      a `frctl freeze` moves flightrec_incidents_total{rule="manual"};
#   d. a reload to a directory that does not exist logs one warning (not
#      one per interval), status counts the failures, the old file is
#      removed; once the directory exists the file is written again;
#   e. a clean stop leaves flightrec_up 0.
BUILD=$1
STORM=$2
. "$(dirname "$0")/lib.sh"

EXPORTER=/usr/bin/prometheus-node-exporter
XPID=
stop_exporter() {
	if [ -n "$XPID" ] && kill -0 "$XPID" 2>/dev/null; then
		kill -TERM "$XPID"
		wait "$XPID" 2>/dev/null || true
	fi
	XPID=
}
trap 'stop_exporter; cleanup' EXIT

# node_exporter runs as the prometheus user: it must reach the directory
chmod 0711 "$T"
mkdir -m 0755 "$T/prom"
PROM="$T/prom/flightrec.prom"
write_conf() {
	cat >"$T/fr.conf" <<CONF
recorder = { ring_size = "32K"; };
store = { size = "16M"; segments = 4; };
# samples and off-CPU stacks (kilobytes each) would overflow small rings
# now and then: the drops must come only from the storm, so that they hold
# still to be compared
sources = { sample = { enabled = false; }; sched = { offcpu_stacks = false; }; };
prometheus = { textfile = "$1"; interval = "1s"; };
CONF
}
write_conf "$PROM"
start_daemon "$T/fr.conf"

for _ in $(seq 50); do
	[ -f "$PROM" ] && break
	sleep 0.1
done
[ -f "$PROM" ] || fail "no textfile at $PROM"
[ "$(stat -c %a "$PROM")" = 644 ] || fail "textfile mode $(stat -c %a "$PROM"), not 644"
ok "textfile written, mode 644"

port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
setpriv --reuid=prometheus --regid=prometheus --clear-groups -- "$EXPORTER" \
	--web.listen-address="127.0.0.1:$port" --collector.disable-defaults --collector.textfile \
	--collector.textfile.directory="$T/prom" >"$T/exporter.log" 2>&1 &
XPID=$!
scrape() {
	curl -sf "http://127.0.0.1:$port/metrics" >"$T/scrape.txt"
}
for _ in $(seq 100); do
	scrape && break
	kill -0 "$XPID" 2>/dev/null || fail "node_exporter exited: $(cat "$T/exporter.log")"
	sleep 0.1
done
scrape || fail "node_exporter does not answer on 127.0.0.1:$port"
grep -q '^flightrec_up 1$' "$T/scrape.txt" || fail "node_exporter does not serve flightrec_up 1: $(grep -v '^#' "$T/scrape.txt" | head)"
# the collector's own verdict on our file
if grep -q '^node_textfile_scrape_error 1' "$T/scrape.txt"; then
	fail "node_exporter could not parse the textfile: $(cat "$T/exporter.log")"
fi
ok "node_exporter (as user prometheus) serves our metrics, no scrape error"

promtool check metrics <"$PROM" >"$T/promtool.out" 2>&1 || fail "promtool: $(cat "$T/promtool.out")"
[ ! -s "$T/promtool.out" ] || fail "promtool finds problems: $(cat "$T/promtool.out")"
grep -E '^(# (HELP|TYPE) )?flightrec_' "$T/scrape.txt" | promtool check metrics >"$T/promtool.out" 2>&1 ||
	fail "promtool on the scrape: $(cat "$T/promtool.out")"
ok "promtool check metrics: no problem"
ls "$T/prom" | grep -q '\.tmp$' && fail "a temporary file is left in the textfile directory"

# --- b. drop storm: counters per CPU and source against status ---
# a value of the scrape: metric{labels} exactly as node_exporter prints
# them (labels sorted; numbers as floats, 1.6777216e+07: whole ones are
# printed back as integers)
metric() {
	awk -v m="$1" '$1 == m { v = $2 + 0; if (v == int(v)) printf "%.0f\n", v; else print v; found = 1 }
		END { if (!found) print "missing" }' "$T/scrape.txt"
}
drops_of() { # FILE: "source cpu dropped" lines from a status
	jq -r '.sources | to_entries[] | .key as $s | .value.dropped_per_cpu | to_entries[] | "\($s) \(.key) \(.value)"' "$1"
}
# status --json and a scrape taken after it, once the file has been
# rewritten twice since, and a second status that must say the same of the
# drops: what both say of a quiet moment
snapshot() {
	local w0 w
	"$FRCTL" --store "$T/store" status --json >"$T/status.json"
	w0=$(jq '.textfile.written' "$T/status.json")
	for _ in $(seq 100); do
		w=$("$FRCTL" --store "$T/store" status --json | jq '.textfile.written')
		[ "$w" -ge $((w0 + 2)) ] && break
		sleep 0.1
	done
	scrape || fail "scrape failed"
	"$FRCTL" --store "$T/store" status --json >"$T/status2.json"
	[ "$(drops_of "$T/status.json")" = "$(drops_of "$T/status2.json")" ] ||
		fail "drops moved while nothing stormed: $(drops_of "$T/status.json") / $(drops_of "$T/status2.json")"
}
snapshot
cp "$T/status.json" "$T/status0.json"
cp "$T/scrape.txt" "$T/scrape0.txt"
kill -STOP "$DPID"
"$STORM" 300
kill -CONT "$DPID"
sleep 1.5 # the drops are counted in BPF; a drain tick follows
snapshot
drops_of "$T/status0.json" >"$T/before.txt"
drops_of "$T/status.json" >"$T/after.txt"
total=0
while read -r src cpu after; do
	before=$(awk -v s="$src" -v c="$cpu" '$1 == s && $2 == c { print $3 }' "$T/before.txt")
	got=$(metric "flightrec_dropped_records_total{cpu=\"$cpu\",source=\"$src\"}")
	[ "$got" = "$after" ] || fail "$src cpu $cpu: status says $after dropped, the scrape $got"
	total=$((total + after - before))
done <"$T/after.txt"
[ "$total" -gt 0 ] || fail "the storm dropped nothing (32K rings, daemon stopped)"
# and per CPU, the sources add up to status's per-CPU drops
for cpu in $(jq -r '.per_cpu[].cpu' "$T/status.json"); do
	want=$(jq --argjson c "$cpu" '.per_cpu[] | select(.cpu == $c) | .dropped' "$T/status.json")
	got=$(awk -v c="cpu=\"$cpu\"" '/^flightrec_dropped_records_total/ && index($1, c) { s += $2 } END { print s + 0 }' "$T/scrape.txt")
	[ "$got" = "$want" ] || fail "cpu $cpu: status per_cpu says $want dropped, the scrape's sources add to $got"
done
ok "a drop storm moved flightrec_dropped_records_total by $total, per CPU and source exactly as status says"

# --- c. store, retention, rules ---
size=$(metric flightrec_store_size_bytes)
[ "$size" != missing ] && [ "$size" -gt 0 ] || fail "flightrec_store_size_bytes: $size"
[ "$(metric flightrec_store_limit_bytes)" = $((16 << 20)) ] || fail "flightrec_store_limit_bytes: $(metric flightrec_store_limit_bytes)"
ret=$(metric flightrec_store_retention_seconds)
up=$(jq ".uptime_s" "$T/status2.json")
awk -v r="$ret" -v u="$up" 'BEGIN { exit !(r > 0 && r <= u + 1) }' ||
	fail "retention $ret s for a store begun $up s ago"
rss=$(metric flightrec_process_resident_memory_bytes)
[ "$rss" -gt $((1 << 20)) ] || fail "flightrec_process_resident_memory_bytes: $rss"
cpu_s=$(metric flightrec_process_cpu_seconds_total)
awk -v c="$cpu_s" 'BEGIN { exit !(c > 0) }' || fail "flightrec_process_cpu_seconds_total: $cpu_s"
ok "store size $size bytes, retention $ret s (up $up s), daemon RSS $rss bytes, CPU $cpu_s s"

m0=$(metric 'flightrec_incidents_total{rule="manual"}')
[ "$m0" = 0 ] || fail "manual incidents before a freeze: $m0"
"$FRCTL" --store "$T/store" freeze --reason textfile >/dev/null
snapshot
[ "$(metric 'flightrec_incidents_total{rule="manual"}')" = 1 ] ||
	fail "flightrec_incidents_total{rule=\"manual\"} after a freeze: $(metric 'flightrec_incidents_total{rule="manual"}')"
ok "a freeze moves flightrec_incidents_total{rule=\"manual\"} to 1"

# --- d. a directory that does not exist, then does ---
write_conf "$T/missing/flightrec.prom"
kill -HUP "$DPID"
sleep 4 # four intervals
[ ! -e "$PROM" ] || fail "the old textfile is still there after the path changed"
n=$(grep -c 'Failed to write the Prometheus textfile' "$T/daemon.log" || true)
[ "$n" = 1 ] || fail "$n warnings for the missing directory in 4 intervals, want 1"
failed=$("$FRCTL" --store "$T/store" status --json | jq '.textfile.failed')
[ "$failed" -ge 3 ] || fail "status counts $failed failed writes"
mkdir -m 0755 "$T/missing"
sleep 1.5
[ -f "$T/missing/flightrec.prom" ] || fail "no textfile once the directory exists"
grep -q 'Writing the Prometheus textfile .* again' "$T/daemon.log" || fail "no line saying the textfile is written again"
ok "missing directory: one warning, $failed failures counted, old file removed, written again once it exists"

# --- e. clean stop ---
stop_daemon
grep -q '^flightrec_up 0$' "$T/missing/flightrec.prom" || fail "no flightrec_up 0 after a clean stop"
ok "a clean stop leaves flightrec_up 0"
