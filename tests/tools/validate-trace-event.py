#!/usr/bin/env python3
# Structural validation of a Trace Event Format (JSON object form) file, as
# the Perfetto UI and chrome://tracing import it: the document shape, the
# fields each phase needs and their types, known phases and instant
# scopes, metadata naming processes and threads, every thread with events
# named, and complete (X) slices of one thread nesting properly (a slice
# that partly overlaps another on its thread breaks the flame chart).
# Prints a summary as JSON on success; one line per problem and exit 1
# otherwise.
#   validate-trace-event.py FILE
import json
import sys
from collections import defaultdict

PHASES = {"X", "B", "E", "i", "I", "C", "M", "b", "e", "n", "s", "t", "f", "P", "O", "N", "D"}
problems = []


def problem(msg):
    problems.append(msg)
    if len(problems) > 20:
        raise SystemExit("\n".join(problems + ["... (more)"]))


def num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        doc = json.load(f)
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        raise SystemExit("not a Trace Event Format object: no traceEvents array")
    if doc.get("displayTimeUnit", "ms") not in ("ms", "ns"):
        problem("displayTimeUnit must be ms or ns")
    names = {"process": set(), "thread": set()}
    used = set()
    used_procs = set()
    slices = defaultdict(list)
    counts = defaultdict(int)
    for i, e in enumerate(doc["traceEvents"]):
        where = f"event {i}"
        if not isinstance(e, dict):
            problem(f"{where}: not an object")
            continue
        ph = e.get("ph")
        counts[ph] += 1
        if ph not in PHASES:
            problem(f"{where}: unknown phase {ph!r}")
            continue
        if not isinstance(e.get("name"), str):
            problem(f"{where}: name is not a string")
        for k in ("pid", "tid"):
            if k in e and not isinstance(e[k], int):
                problem(f"{where}: {k} is not an integer")
        if "args" in e and not isinstance(e["args"], dict):
            problem(f"{where}: args is not an object")
        if ph == "M":
            if e.get("name") in ("process_name", "thread_name"):
                if not isinstance(e.get("args", {}).get("name"), str):
                    problem(f"{where}: {e.get('name')} without args.name")
                if e["name"] == "process_name":
                    names["process"].add(e.get("pid"))
                else:
                    names["thread"].add((e.get("pid"), e.get("tid")))
            continue
        if not num(e.get("ts")) or e["ts"] < 0:
            problem(f"{where}: ts missing or negative")
            continue
        if "pid" not in e or "tid" not in e:
            problem(f"{where}: pid/tid missing")
            continue
        # counters are tracks of their process; everything else of a thread
        if ph == "C":
            used_procs.add(e["pid"])
        elif ph in ("i", "I") and e.get("s") == "g":
            pass  # global instants belong to no thread
        else:
            used.add((e["pid"], e["tid"]))
        if ph == "X":
            if not num(e.get("dur")) or e["dur"] < 0:
                problem(f"{where}: X without a non-negative dur")
                continue
            slices[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"], i))
        elif ph in ("i", "I"):
            if e.get("s", "t") not in ("g", "p", "t"):
                problem(f"{where}: instant scope {e.get('s')!r}")
        elif ph == "C":
            args = e.get("args")
            if not isinstance(args, dict) or not args or not all(num(v) for v in args.values()):
                problem(f"{where}: counter without numeric args")
    for pid in sorted(used_procs):
        if pid not in names["process"]:
            problem(f"pid {pid} has counters but no process_name")
    for track in sorted(used):
        if track[0] not in names["process"]:
            problem(f"pid {track[0]} has events but no process_name")
        if track not in names["thread"]:
            problem(f"thread {track} has events but no thread_name")
    # nesting: sorted by start (longest first on ties), each slice must end
    # before its enclosing one does (a tolerance of 1 ns for rounding)
    for track, v in slices.items():
        v.sort(key=lambda s: (s[0], -s[1]))
        stack = []
        for start, end, i in v:
            while stack and start >= stack[-1][1] - 1e-3:
                stack.pop()
            if stack and end > stack[-1][1] + 1e-3:
                problem(f"thread {track}: slice (event {i}) [{start}, {end}] overlaps event {stack[-1][2]} "
                        f"[{stack[-1][0]}, {stack[-1][1]}] without nesting")
            stack.append((start, end, i))
    if problems:
        raise SystemExit("\n".join(problems))
    print(json.dumps({"events": len(doc["traceEvents"]), "phases": counts,
                      "processes": len(names["process"]), "threads": len(names["thread"])}))


main()
