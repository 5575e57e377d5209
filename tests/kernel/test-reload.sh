#!/bin/bash
# Reload (SIGHUP) applies sources, not only thresholds, and touches nothing
# that did not change:
#   - a source switched on by reload attaches and records; one switched
#     off detaches and stops recording;
#   - the BPF programs of the other sources are the same programs (ids)
#     before and after every reload;
#   - the sampler moves to a new frequency; metrics start and stop;
#   - records from before the reloads are all still there;
#   - a setting that sizes the store is reported as needing a restart and
#     the running bound is kept; a bad file keeps the running config.
BUILD=$1
HELPERS=$2
. "$(dirname "$0")/lib.sh"

# conf SYSCALL SAMPLE HZ METRICS [SIZE]
conf() {
	cat >"$T/fr.conf" <<CONF
store = { size = "${5:-32M}"; segments = 4; sync_interval = "200ms"; };
sources = {
  syscall = { enabled = $1; threshold = "100ms"; };
  sample = { enabled = $2; hz = $3; };
};
metrics = { enabled = $4; interval = "300ms"; };
CONF
}
# BPF programs the daemon holds, by id (grep says 2 when one of the
# daemon's other fds closes between the glob and the read: not a failure)
progs() { { grep -h '^prog_id:' /proc/"$DPID"/fdinfo/* 2>/dev/null || true; } | awk '{print $2}' | sort -un; }
status() { "$FRCTL" --config "$T/fr.conf" --store "$T/store" status --json; }
# reload: SIGHUP, then wait for the log line
reload() {
	local n
	n=$(grep -c 'Configuration reload' "$T/daemon.log" || true)
	kill -HUP "$DPID"
	for _ in $(seq 50); do
		[ "$(grep -c 'Configuration reload' "$T/daemon.log" || true)" -gt "$n" ] && return 0
		sleep 0.1
	done
	fail "no reload logged within 5 s"
}
# blocked_read MARKER: a read blocked 300 ms; prints its pid
blocked_read() { "$HELPERS/fr-block-read" "$1" 300 | jq .pid; }

conf false false 49 false
start_daemon "$T/fr.conf"
status | jq -e '.sources.syscall.attached == false and .sources.sample.attached == false' >/dev/null ||
	fail "syscall and sample should start detached"
P0=$(blocked_read before-reload)
before=$(progs)
[ -n "$before" ] || fail "no BPF programs found in /proc/$DPID/fdinfo"

# 1. syscall and sampling on at 99 Hz, metrics on
conf true true 99 true
reload
grep -q 'Source syscall started' "$T/daemon.log" || fail "syscall source not started by reload"
status | jq -e '.sources.syscall.attached and .sources.sample.attached and .sampler.hz == 99' >/dev/null ||
	fail "after reload: syscall/sample not attached or sampler not at 99 Hz: $(status | jq -c '.sources.syscall, .sampler')"
on=$(progs)
comm -23 <(echo "$before") <(echo "$on") | grep -q . &&
	fail "programs of unchanged sources were replaced: gone $(comm -23 <(echo "$before") <(echo "$on") | tr '\n' ' ')"
[ "$(comm -13 <(echo "$before") <(echo "$on") | wc -l)" -ge 2 ] || fail "no new programs for syscall and sample"
P1=$(blocked_read syscall-on)
wait_for_record ".type == \"syscall\" and .pid == $P1 and .syscall == \"read\""
wait_for_record ".type == \"sample\""
wait_for_record ".type == \"metrics\""
ok "reload switched on syscall, sample (99 Hz) and metrics; the other sources' $(echo "$before" | wc -l) programs are the same ids"

# 2. sampler to 19 Hz: its program stays, only the perf events change
conf true true 19 true
reload
status | jq -e '.sampler.hz == 19' >/dev/null || fail "sampler not moved to 19 Hz: $(status | jq -c .sampler)"
[ "$(progs)" = "$on" ] || fail "a frequency change replaced programs"
ok "reload moved the sampler to 19 Hz with the same programs"

# 3. syscall, sample and metrics off again; a store size change is refused until restart
conf false false 19 false 64M
reload
grep -q 'store.size changed: it takes effect at the next restart' "$T/daemon.log" || fail "store.size change not reported"
status | jq -e '.store.bytes_bound == 33554432' >/dev/null ||
	fail "the running bound changed without a restart: $(status | jq -c .store)"
status | jq -e '.sources.syscall.attached == false and .sources.sample.attached == false' >/dev/null ||
	fail "syscall/sample still attached after being switched off"
[ "$(progs)" = "$before" ] || fail "switching off left other programs than the original ones: $(progs | tr '\n' ' ')"
P2=$(blocked_read syscall-off)
P3=$(blocked_read marker-after) # a later record: the drain has passed P2
wait_for_record ".type == \"exec\" and .pid == $P3"
"$FRCTL" --store "$T/store" dump --format json >"$T/all.json"
jq -e -n "[inputs | select(.type == \"syscall\" and .pid == $P2)] | length == 0" <"$T/all.json" >/dev/null ||
	fail "a syscall record after the source was switched off"
m1=$(jq -n '[inputs | select(.type == "metrics")] | length' <"$T/all.json")
sleep 1
m2=$("$FRCTL" --store "$T/store" dump --format json | jq -n '[inputs | select(.type == "metrics")] | length')
[ "$m2" -le $((m1 + 1)) ] || fail "metrics still recorded after being switched off ($m1 -> $m2)"
ok "reload switched syscall, sample and metrics off; the original programs remain; store.size waits for a restart"

# 4. nothing recorded before was lost
for p in "$P0" "$P1"; do
	jq -e -n "any(inputs; .type == \"exec\" and .pid == $p)" <"$T/all.json" >/dev/null ||
		fail "the exec of $p, recorded before the reloads, is gone"
done
jq -e -n "any(inputs; .type == \"syscall\" and .pid == $P1)" <"$T/all.json" >/dev/null ||
	fail "the syscall record of $P1 is gone"
ok "records from before the reloads are all there"

# 5. a bad file: error with file:line, the running config stays
echo 'sources = { syscall = { threshold = "soon"; }; };' >"$T/fr.conf"
reload
grep -q "fr.conf:1: " "$T/daemon.log" || fail "no file:line error for the bad config"
grep -q 'keeping the running configuration' "$T/daemon.log" || fail "bad config: not kept"
kill -0 "$DPID" || fail "daemon died on a bad config"
[ "$(progs)" = "$before" ] || fail "a bad config changed the programs"
ok "a bad config is refused with file:line; nothing changes"
stop_daemon
