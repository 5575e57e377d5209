#!/usr/bin/python3
# switch-clock.py DUMP.json TID... : do the switch records (full mode) and
# the CPU samples of the same run agree on who was on a CPU?
#
# A sample's time is read in its BPF program; a switch record's is the run
# queue's clock converted, or read when the scheduler did not update that
# clock for the switch and it can be a tick old (sched.bpf.c, "Time").  For every
# sample of one of TIDs, the last switch before it on its CPU must have
# switched to that thread.  Samples closer than TOLERANCE_NS to a switch on
# their CPU are not judged.  Times off by more than that misplace switches
# against samples; with two threads taking turns on a CPU every few ms,
# some samples then fall on the wrong side of one (with switch times 1 ms
# late, 114 of 157 did).
# A few samples in a run may disagree (one of ~60 now and then, next to a
# switch to a thread of PID 1): on these VMs the kernel traces switches
# to PID 1's tokio-rt-worker threads but never one away from them
# (bpftrace on sched:sched_switch agrees: @next[70] 3, @prev[70] none in
# 3 s), so the switch after such a thread runs says it left the idle task
# and the time between is unaccounted.  Up to MAX_BAD_SHARE pass, each
# printed with the switches around it; so are the first switches that do
# not leave the task the one before went to (a record missing or out of
# place), and how many there are.
# Prints one line last; exits 1 when more disagree or too few were judged.
import bisect
import json
import sys
from datetime import datetime, timezone

TOLERANCE_NS = 50_000
MIN_JUDGED = 10
MAX_BAD_SHARE = 0.05


def ns(t):
    sec, frac = t.rstrip("Z").split(".")
    whole = datetime.strptime(sec, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc)
    return int(whole.timestamp()) * 1_000_000_000 + int(frac.ljust(9, "0"))


def around(s, lo, hi, t):
    """Switches lo..hi-1 of s, timed from t."""
    return ", ".join(f"{ts - t:+d} ns {pt} -> {nt}" for ts, nt, pt, _ in s[max(0, lo):hi])


def main():
    tids = {int(t) for t in sys.argv[2:]}
    switches = {}  # cpu -> [(ns, next_tid, tid, next_comm)]
    samples = []
    lost = {}  # cpu -> records lost (gap records): lost switches misplace samples too
    with open(sys.argv[1]) as f:
        for line in f:
            r = json.loads(line)
            if r["type"] == "switch":
                switches.setdefault(r["cpu"], []).append((ns(r["time"]), r["next_tid"], r["tid"], r["next_comm"]))
            elif r["type"] == "gap":
                lost[r.get("cpu")] = lost.get(r.get("cpu"), 0) + r["lost"]
            elif r["type"] == "sample" and r["tid"] in tids:
                samples.append((r["cpu"], ns(r["time"]), r["tid"]))
    for s in switches.values():
        s.sort()
    judged = bad = 0
    for cpu, t, tid in samples:
        s = switches.get(cpu, [])
        i = bisect.bisect_right(s, (t, float("inf"), 0))
        if i == 0 or t - s[i - 1][0] < TOLERANCE_NS or (i < len(s) and s[i][0] - t < TOLERANCE_NS):
            continue
        judged += 1
        if s[i - 1][1] != tid:
            bad += 1
            print(f"sample of {tid} on CPU {cpu} at {t}: the switch {t - s[i - 1][0]} ns before went to {s[i - 1][1]} "
                  f"(switches around it: {around(s, i - 3, i + 2, t)})")
    # each switch leaves the task the one before it switched to: where
    # not, a switch record is missing or out of place (printed, for
    # whoever looks into a disagreement; not judged)
    breaks = 0
    for cpu, s in sorted(switches.items()):
        for j in range(1, len(s)):
            if s[j][2] != s[j - 1][1]:
                breaks += 1
                if breaks <= 5:
                    print(f"break on CPU {cpu} at {s[j][0]}, after a switch to {s[j - 1][3]}: "
                          f"{around(s, j - 2, j + 3, s[j][0])}")
    gaps = ", ".join(f"CPU {c}: {n}" for c, n in sorted(lost.items(), key=str)) or "none"
    print(f"{judged} samples judged (of {len(samples)}), {bad} disagree with the switch records; records lost: {gaps}; "
          f"switches not leaving the task the one before went to: {breaks} of {sum(len(s) for s in switches.values())}")
    return 1 if bad > MAX_BAD_SHARE * judged or judged < MIN_JUDGED else 0


if __name__ == "__main__":
    sys.exit(main())
