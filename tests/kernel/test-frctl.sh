#!/bin/bash
# frctl for people and tools, on a real recording:
#   - --format perfetto passes the Trace Event Format validator, has a
#     named track per CPU and per thread, and its slices carry exactly the
#     durations of the syscall and off-CPU records;
#   - a bundle moved to an empty directory, with the store deleted, dumps
#     as JSON byte for byte like the store did for the same window, and
#     names the host that recorded it, not the one that cut it;
#   - report names the slow reads, the CPU hog's function, the hottest
#     call paths and the mark;
#   - --cgroup keeps the records of that cgroup and the ones below;
#   - text is coloured on a terminal only.
BUILD=$1
HELPERS=$2
VALIDATE=$(dirname "$0")/../tools/validate-trace-event.py
. "$(dirname "$0")/lib.sh"
CG2=$(findmnt -n -t cgroup2 -o TARGET | head -1)
[ -n "$CG2" ] || fail "no cgroup2 mount"
CG="$CG2/fr-frctl-$$"
trap 'rmdir "$CG/child" "$CG" 2>/dev/null; cleanup' EXIT

cat >"$T/fr.conf" <<CONF
store = { size = "32M"; segments = 4; sync_interval = "200ms"; };
sources = {
  syscall = { enabled = true; threshold = "100ms"; };
  sched = { full = true; offcpu_threshold = "100ms"; };
};
CONF
start_daemon "$T/fr.conf"
T0=$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)

mkdir -p "$CG/child"
# in the cgroup's child: two reads blocked 300 and 250 ms (sleeps are
# excluded from syscall records by default: waiting is what they are for)
sh -c "echo \$\$ >'$CG/child/cgroup.procs'; '$HELPERS/fr-block-read' a 300; '$HELPERS/fr-block-read' b 250" >/dev/null &
SLEEPER=$!
sleep 0.2
"$HELPERS/fr-spin" 1 >"$T/spin.pid"
wait $SLEEPER
sleep 0.15
"$FRCTL" --store "$T/store" mark "frctl test mark" >/dev/null
sleep 0.5
T1=$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)
W=(--since "$T0" --until "$T1")
wait_for_record '.type == "mark" and .text == "frctl test mark"'

# a terminal type that has colours, whatever the caller's (CI may have none)
env -u NO_COLOR TERM=xterm script -qec "$FRCTL --store $T/store dump --last 1m --type syscall" /dev/null >"$T/tty.txt"
"$FRCTL" --store "$T/store" dump --last 1m --type syscall >"$T/pipe.txt"
"$FRCTL" --store "$T/store" report --last 1m >"$T/report.txt" || fail "report failed"
"$FRCTL" --store "$T/store" dump --last 1m --cgroup "/fr-frctl-$$" --format json >"$T/cg.json"
# the rest from the stopped store: a running daemon may still add records
# of the window (stamped at their start) between two reads
stop_daemon
"$FRCTL" --store "$T/store" dump "${W[@]}" --format json >"$T/store.json"
"$FRCTL" --store "$T/store" dump "${W[@]}" --format perfetto -o "$T/trace.json" || fail "perfetto dump failed"
# cut on a machine of another name (a UTS namespace): the bundle must
# still name this one, which recorded it
# shellcheck disable=SC2016 # the inner shell's
unshare -u sh -c 'hostname fr-bundler && exec "$@"' sh "$FRCTL" --store "$T/store" dump "${W[@]}" -o "$T/b.frb" ||
	fail "bundle failed"
BOOT=$(tr -d '-' </proc/sys/kernel/random/boot_id)
jq -e --arg h "$(hostname)" --arg k "$(uname -r)" --arg b "$BOOT" '.boot_id == $b and .host == $h and .kernel == $k' \
	"$T/store/hosts/$BOOT.json" >/dev/null || fail "the store's hosts/$BOOT.json does not name this host: $(cat "$T/store/hosts/$BOOT.json")"
python3 -c '
import json, struct, sys
d = open(sys.argv[1], "rb").read()
print(d[64:64 + struct.unpack_from("<I", d, 24)[0]].decode())' "$T/b.frb" >"$T/b.meta"
jq -e --arg h "$(hostname)" --arg k "$(uname -r)" --arg b "$BOOT" '.host == $h and .kernel == $k and .boot_id == $b and
	.recorded_on[0].host == $h and .bundled_on.host == "fr-bundler"' "$T/b.meta" >/dev/null ||
	fail "the bundle does not name the recording host $(hostname) apart from the bundling one: $(jq -c '{host, kernel, boot_id, bundled_on}' "$T/b.meta")"
ok "the store names its boot's host ($(hostname), $(uname -r)); a bundle cut as fr-bundler names both apart"
"$FRCTL" --store "$T/store" dump --format perfetto -o "$T/trace-all.json" || fail "perfetto dump of the whole store failed"

# perfetto
python3 "$VALIDATE" "$T/trace.json" >"$T/validate.out" || fail "Trace Event Format validation: $(cat "$T/validate.out")"
ok "perfetto output is valid Trace Event Format: $(cat "$T/validate.out")"
python3 "$VALIDATE" "$T/trace-all.json" >"$T/validate.out" || fail "Trace Event Format validation of the whole store: $(cat "$T/validate.out")"
ok "... and so is the whole store's: $(cat "$T/validate.out")"
python3 - "$T/store.json" "$T/trace.json" <<'PY' || fail "perfetto tracks or slices do not match the records"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
trace = json.load(open(sys.argv[2]))["traceEvents"]
names = {(e["pid"], e["tid"]): e["args"]["name"] for e in trace if e["ph"] == "M" and e["name"] == "thread_name"}
cpus = {r["cpu"] for r in recs if r["type"] in ("sample", "switch")}
cpu_tracks = {n for n in names.values() if n.startswith("cpu ")}
missing = {f"cpu {c}" for c in cpus} - cpu_tracks
assert not missing, f"no track for {missing}"
# every thread with a record has a track named by its comm
for r in recs:
    if r["type"] in ("syscall", "offcpu") and (r["pid"], r["tid"]) not in names:
        raise SystemExit(f"thread {r['pid']}/{r['tid']} ({r['comm']}) has no named track")
    if r["type"] == "offcpu" and not names.get((r["pid"], r["tid"] | 0x40000000), "").endswith(" sched"):
        raise SystemExit(f"thread {r['pid']}/{r['tid']} ({r['comm']}) has no named sched track")
# slices: each syscall/off-CPU record has a slice on its thread with its
# exact duration (microseconds with 3 decimals = nanoseconds).  An off-CPU
# slice may start a few us late, a tick (4 ms) at most, where the thread's
# last one ended (output-perfetto.c: the scheduler's times are converted in
# BPF); its args keep the exact duration
slices = {}
for e in trace:
    if e["ph"] == "X":
        exact = e.get("args", {}).get("duration_ns")
        slices.setdefault((e["pid"], e["tid"], e["name"]), []).append((round(e["dur"] * 1000), exact))
n = 0
for r in recs:
    d = r.get("duration_ns")
    if r["type"] == "syscall":
        ok = d in [s for s, _ in slices.get((r["pid"], r["tid"], r["syscall"]), [])]
    elif r["type"] == "offcpu":  # on the thread's sched track
        ok = any(x == d and d - 5000000 <= s <= d for s, x in slices.get((r["pid"], r["tid"] | 0x40000000, "off-CPU"), []))
    else:
        continue
    assert ok, f"no slice of {d} ns for {r['type']} of {r['pid']}/{r['tid']}"
    n += 1
reads = [d for (p, t, name), v in slices.items() if name == "read" for d, _ in v]
assert any(d >= 300000000 for d in reads), f"no 0.3 s read slice: {reads}"
print(f"ok: perfetto has a named track for each of {len(cpus)} CPUs and each thread; {n} slices match their records' durations exactly")
PY

# bundle: elsewhere, without the store
mkdir "$T/empty"
mv "$T/b.frb" "$T/empty/"
rm -rf "$T/store"
(cd "$T/empty" && "$FRCTL" --store /nonexistent dump --input b.frb --format json >"$T/bundle.json") ||
	fail "dump --input of the moved bundle failed"
[ -s "$T/store.json" ] || fail "the store's window was empty"
cmp -s "$T/store.json" "$T/bundle.json" ||
	fail "bundle dump differs from the store's: $(diff "$T/store.json" "$T/bundle.json" | head -5)"
ok "bundle moved to an empty directory, store deleted: $(wc -l <"$T/bundle.json") records, dump --format json identical byte for byte"
"$FRCTL" report --input "$T/empty/b.frb" >"$T/report.bundle" || fail "report --input of the bundle failed"
grep -q 'read.*took' "$T/report.bundle" || fail "bundle report lacks the slow reads: $(cat "$T/report.bundle")"
grep -qxF "Host: $(hostname), kernel $(uname -r)" "$T/report.bundle" ||
	fail "the bundle's report does not name the recording host: $(head -3 "$T/report.bundle")"
ok "report reads the bundle too"

# report
for want in 'Slowest syscalls' 'fr-block-read.*read' 'fr_spin_seventy' '^  hottest call paths' '%  *[0-9][0-9]*  .*: .* → ' 'frctl test mark' 'Gaps: '; do
	grep -q -- "$want" "$T/report.txt" || fail "report lacks '$want': $(cat "$T/report.txt")"
done
# one screen: 60 lines, and 12 more for the off-CPU waits' stacks and
# their call paths (issue 27)
[ "$(wc -l <"$T/report.txt")" -le 72 ] || fail "report is $(wc -l <"$T/report.txt") lines: not one screen"
ok "report ($(wc -l <"$T/report.txt") lines) names the slow reads, the hog's function, the call paths, the mark and the gaps"

# --cgroup
jq -e -s --arg cg "/fr-frctl-$$" 'length > 0 and all(.[]; .type == "gap" or .cgroup == $cg or (.cgroup | startswith($cg + "/")))
	and ([.[] | select(.type == "syscall" and .syscall == "read" and .duration_ns >= 200000000)] | length) == 2' "$T/cg.json" >/dev/null ||
	fail "--cgroup /fr-frctl-$$: $(jq -c '[.type, .comm, .cgroup]' "$T/cg.json" | sort | uniq -c | head)"
ok "--cgroup keeps its cgroup and those below: $(wc -l <"$T/cg.json") records, both slow reads"

# colours
grep -q $'\033\\[' "$T/tty.txt" || fail "no colour on a terminal"
! grep -q $'\033' "$T/pipe.txt" || fail "colour codes in piped output"
ok "colours on a terminal only"
