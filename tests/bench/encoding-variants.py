#!/usr/bin/env python3
# Benchmark aid (not a test): how much smaller full-mode switch records
# would be on disk under other chunk encodings, before changing the codec.
# Input: `frctl dump --type switch --format json` of a store recorded with
# sources.sched.full (for example by sched-events.sh's configuration under
# `perf bench sched pipe`).  Per CPU, records are cut into chunks of about
# 256 KiB of the current encoding; each chunk is encoded as:
#   row          the store's encoding as rows (lib/record-codec.c): fields
#                of a record one after the other, timestamps as deltas
#   ts-split     the same, with the timestamp deltas in a stream of their own
#   intern-row   each task (pid, tid, cgroup, comm) written once per chunk,
#                then referred to by its index (prev and next of a switch)
#   columns      every field in a stream of its own (what chunks hold
#                since FR_CHUNK_INCOMPAT_STREAMS)
#   intern-cols  interned tasks, every field in a stream of its own
# and compressed with `zstd -3` (the default level).  Prints raw and
# compressed bytes per record for each.
#   tests/bench/encoding-variants.py switch.json
import datetime
import json
import subprocess
import sys


def uv(x):
    out = bytearray()
    while True:
        b, x = x & 0x7F, x >> 7
        if not x:
            out.append(b)
            return bytes(out)
        out.append(b | 0x80)


def sv(x):
    return uv((x << 1) ^ (x >> 63) if x < 0 else x << 1)


def ns(t):
    base, frac = t[:-1].split(".")
    d = datetime.datetime.strptime(base, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc)
    return int(d.timestamp()) * 10**9 + int(frac.ljust(9, "0"))


def zstd_size(b):
    return len(subprocess.run(["zstd", "-q", "-c", "-3"], input=b, stdout=subprocess.PIPE, check=True).stdout)


def encode(recs):
    """{variant: bytes} of one chunk of records"""
    s = {k: bytearray() for k in ("row", "ts", "rest", "irow")}
    cols = {}
    icols = {}
    tasks = {}
    prev = None

    def col(d, k, b):
        d.setdefault(k, bytearray()).extend(b)

    for r in recs:
        t = ns(r["time"])
        delta = t - prev if prev is not None else t
        prev = t
        comm, nc = r["comm"].encode(), r["next_comm"].encode()
        fields = [bytes([11, 0]), sv(delta), uv(r["pid"]), sv(r["tid"] - r["pid"]), uv(r["cgroup_id"]),
                  bytes([len(comm)]) + comm, uv(r["prev_state"]), uv(r["next_pid"]),
                  sv(r["next_tid"] - r["next_pid"]), uv(len(nc)) + nc]
        for i, f in enumerate(fields):
            s["row"] += f
            col(cols, i, f)
            if i == 1:
                s["ts"] += f
            else:
                s["rest"] += f
        irec = bytearray(bytes([11, 0]) + sv(delta))
        col(icols, "hdr", bytes([11, 0]))
        col(icols, "ts", sv(delta))
        for key, k in (((r["pid"], r["tid"], r["cgroup_id"], comm), "a"), ((r["next_pid"], r["next_tid"], 0, nc), "b")):
            if key in tasks:
                ref = uv(tasks[key] + 1)
            else:
                tasks[key] = len(tasks)
                ref = uv(0) + uv(key[0]) + uv(key[1]) + uv(key[2]) + bytes([len(key[3])]) + key[3]
            irec += ref
            col(icols, k, ref)
        irec += uv(r["prev_state"])
        col(icols, "ps", uv(r["prev_state"]))
        s["irow"] += irec
    return {
        "row": bytes(s["row"]),
        "ts-split": bytes(s["ts"] + s["rest"]),
        "intern-row": bytes(s["irow"]),
        "columns": b"".join(bytes(v) for v in cols.values()),
        "intern-cols": b"".join(bytes(v) for v in icols.values()),
    }


def main():
    percpu = {}
    with open(sys.argv[1]) as f:
        for line in f:
            r = json.loads(line)
            if r.get("type") == "switch":
                percpu.setdefault(r["cpu"], []).append(r)
    raw, comp, n = {}, {}, 0
    for recs in percpu.values():
        recs.sort(key=lambda r: ns(r["time"]))
        i = 0
        while i < len(recs):
            # a chunk: about 256 KiB of rows (34 bytes a switch)
            j = min(len(recs), i + 256 * 1024 // 34)
            for k, b in encode(recs[i:j]).items():
                raw[k] = raw.get(k, 0) + len(b)
                comp[k] = comp.get(k, 0) + zstd_size(b)
            n += j - i
            i = j
    if not n:
        sys.exit("no switch records in " + sys.argv[1])
    print(f"{n} switch records")
    print(f"{'encoding':<12} {'raw B/rec':>10} {'zstd -3 B/rec':>14} {'vs row':>8}")
    for k in raw:
        print(f"{k:<12} {raw[k] / n:10.2f} {comp[k] / n:14.3f} {comp[k] / comp['row']:8.2f}")


main()
