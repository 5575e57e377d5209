#!/bin/bash
# Exact loss accounting under a storm, with the daemon running (not frozen:
# test-losses.sh covers that): 8 KiB rings, a syscall flood (threads whose
# every read() is over a 1 µs threshold) and an exec storm at once.  Once
# the daemon has stopped (probes detached, rings drained, store synced) its
# last log lines give per CPU what BPF emitted and dropped; then, per CPU:
#   emitted (counted in BPF) = records in the store + dropped (in BPF)
#                              + lost in the daemon
#   the gap records in the store add up to dropped + lost in the daemon.
# Other processes on the machine add records too; the equations hold for
# all of them, and the flood's own records must be among those stored.
BUILD=$1
HELPERS=$2
. "$(dirname "$0")/lib.sh"

cat >"$T/fr.conf" <<CONF
recorder = { ring_size = "8K"; };
store = { size = "256M"; segments = 8; };
sources = { syscall = { enabled = true; threshold = "1us"; }; };
CONF
start_daemon "$T/fr.conf"

"$HELPERS/fr-exec-storm" 400 &
EXEC_PID=$!
"$HELPERS/fr-syscall-flood" 2 3 >"$T/flood.out"
wait "$EXEC_PID"
"$FRCTL" --store "$T/store" status --json >"$T/status.json"
jq -e '[.per_cpu[].dropped] | add > 0' "$T/status.json" >/dev/null ||
	fail "the storm did not overflow the 8K rings while the daemon ran: $(jq -c .per_cpu "$T/status.json")"
stop_daemon

"$FRCTL" --store "$T/store" dump --format json >"$T/dump.json" 2>"$T/dump.err" || fail "dump failed: $(cat "$T/dump.err")"
python3 - "$T/daemon.log" "$T/dump.json" "$(cat "$T/flood.out")" <<'PY' || fail "accounting does not add up"
import json, re, sys
log, dump, flood_calls = sys.argv[1], sys.argv[2], int(sys.argv[3])
acct = {}
for line in open(log):
    m = re.search(r"CPU (\d+): (\d+) records emitted, (\d+) delivered, (\d+) dropped in the kernel, (\d+) lost in the daemon", line)
    if m:
        acct[int(m[1])] = dict(zip(("emitted", "delivered", "dropped", "lost"), map(int, m.groups()[1:])))
if not acct:
    print("no accounting lines in the daemon log"); sys.exit(1)
bpf_types = {"exec", "exit", "fork", "syscall", "offcpu", "runq", "block", "oom", "signal", "tcp", "switch", "sample"}
stored, gaps, flood = {}, {}, 0
with open(dump, encoding="utf-8") as f:
    for line in f:
        r = json.loads(line)
        c = r["cpu"]
        if r["type"] in bpf_types:
            stored[c] = stored.get(c, 0) + 1
            if r["type"] == "syscall" and r["comm"] == "fr-flood":
                flood += 1
        elif r["type"] == "gap":
            gaps[c] = gaps.get(c, 0) + r["lost"]
bad = False
total_e = total_d = 0
for c, a in sorted(acct.items()):
    s, g = stored.get(c, 0), gaps.get(c, 0)
    total_e += a["emitted"]; total_d += a["dropped"]
    print("cpu %d: emitted %d = stored %d + dropped %d + lost in daemon %d; gaps say %d"
          % (c, a["emitted"], s, a["dropped"], a["lost"], g))
    if a["emitted"] != s + a["dropped"] + a["lost"]:
        print("  MISMATCH: %d records unaccounted for" % (a["emitted"] - s - a["dropped"] - a["lost"])); bad = True
    if a["emitted"] != a["delivered"] + a["dropped"]:
        print("  MISMATCH: emitted != delivered + dropped"); bad = True
    if g != a["dropped"] + a["lost"]:
        print("  MISMATCH: gaps %d != dropped + lost %d" % (g, a["dropped"] + a["lost"])); bad = True
if total_d == 0:
    print("no drops at all"); bad = True
if flood == 0:
    print("none of the flood's %d calls was stored" % flood_calls); bad = True
print("storm: %d records emitted, %d dropped and shown as gaps, %d of the flood's %d calls stored"
      % (total_e, total_d, flood, flood_calls))
sys.exit(1 if bad else 0)
PY
ok "per CPU, emitted = stored + dropped + lost, and the gaps in the store add up to the losses"
"$FRCTL" --store "$T/store" dump --type gap >"$T/gaps.txt"
grep -q 'records lost on this CPU' "$T/gaps.txt" || fail "text dump does not show the gaps"
ok "text dump shows the gaps"
