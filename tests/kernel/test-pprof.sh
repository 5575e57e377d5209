#!/bin/bash
# frctl dump --format pprof, read by the real pprof (Debian's golang-go:
# go tool pprof).  fr-spin spends 70 % of its CPU in fr_spin_seventy();
# fr-wait blocks 1.5 s in read() on a pipe; a manual freeze keeps the
# window as an incident.  Then:
#   - go tool pprof -top of the incident's profile: its top function and
#     its share are frctl report's "by function" first line, within 1
#     point; the sample type is cpu (nanoseconds) and the total is the
#     window's samples at 1 s / hz each;
#   - -traces shows fr-spin's stacks through main with the pid, tid and
#     comm labels;
#   - -raw: fr-spin's mapping carries the binary's GNU build id (readelf);
#   - the same profile from the store (--incident) and from a bundle;
#   - --offcpu: an off-CPU profile whose heaviest stack is fr-wait's read,
#     weighted by its blocked time (within 1 % of the record's duration),
#     through wait_for_input (through read's libc wrapper only, where the
#     kernel refuses BPF task work from sched_switch: task_work_here);
#   - bad input: --offcpu with json refused, pprof with --follow refused.
BUILD=$1
HELPERS=$2
. "$(dirname "$0")/lib.sh"

command -v go >/dev/null || fail "go is not installed (scripts/deps.sh installs golang-go)"
# pprof writes nothing of its own but may look for a home and a cache
export HOME="$T" GOCACHE="$T/go-cache" PPROF_TMPDIR="$T" GOFLAGS=-mod=mod GOTOOLCHAIN=local
pprof() { go tool pprof -symbolize=none "$@" 2>>"$T/pprof.err"; }
# traces_with REGEX FILE: the blocks of pprof -traces output (labels, the
# weight and the stack) that match REGEX, one per line ("|" for newlines)
traces_with() {
	awk -v re="$1" '/^-----------\+/ { if (b ~ re) print b; b = ""; next }
		{ b = b $0 "|" } END { if (b ~ re) print b }' "$2"
}

cat >"$T/fr.conf" <<CONF
store = { size = "16M"; segments = 4; sync_interval = "200ms"; };
sources = { sched = { offcpu_threshold = "100ms"; }; };
triggers = {
  rules = ( { name = "manual"; condition = "manual"; before = "30s"; after = "500ms"; } );
};
CONF
start_daemon "$T/fr.conf"
HZ=$("$FRCTL" --config "$T/fr.conf" --store "$T/store" status --json | jq '.sampler.hz // 49')

SPIN=$("$HELPERS/fr-spin" 4)
WAIT=$(cd "$T" && "$HELPERS/fr-wait" pipe 1500) || fail "fr-wait failed"
sleep 1
"$FRCTL" --config "$T/fr.conf" --store "$T/store" freeze --reason pprof >/dev/null || fail "freeze failed"
for _ in $(seq 100); do
	ls "$T/store/incidents/"*.fri >/dev/null 2>&1 && break
	sleep 0.1
done
INC=$(ls "$T/store/incidents/"*.fri 2>/dev/null | head -1)
[ -n "$INC" ] || fail "no incident file"
ID=$(basename "$INC" .fri)

"$FRCTL" --config "$T/fr.conf" dump --input "$INC" --format pprof -o "$T/cpu.pb.gz" || fail "dump --format pprof failed"
gzip -t "$T/cpu.pb.gz" || fail "the profile is not gzip"
"$FRCTL" --config "$T/fr.conf" report --input "$INC" >"$T/report.txt" || fail "report failed"
"$FRCTL" --config "$T/fr.conf" dump --input "$INC" --type sample --format json >"$T/samples.json"
NSAMPLES=$(wc -l <"$T/samples.json")

# -top: the first function against report's "by function" first line
pprof -top "$T/cpu.pb.gz" >"$T/top.txt" || fail "go tool pprof -top failed: $(cat "$T/pprof.err")"
grep -q '^Type: cpu$' "$T/top.txt" || fail "pprof: the sample type is not cpu: $(head -5 "$T/top.txt")"
read -r p_share p_name < <(awk '/flat%/ { hdr = 1; next } hdr && NF >= 6 { sub(/%$/, "", $2); print $2, $6; exit }' "$T/top.txt")
read -r r_share r_name < <(awk '/by function/ { hdr = 1; next } hdr { sub(/%$/, "", $1); print $1, $2; exit }' "$T/report.txt")
[ -n "$p_name" ] && [ "$p_name" = "$r_name" ] ||
	fail "top function: pprof says '$p_name' ($p_share %), report '$r_name' ($r_share %)"
awk -v a="$p_share" -v b="$r_share" 'BEGIN { d = a - b; exit !(d <= 1 && d >= -1) }' ||
	fail "$p_name: pprof $p_share %, report $r_share % (more than 1 point apart)"
ok "go tool pprof -top: $p_name $p_share %, report $r_share %"
# the total: every sample of the window, 1 s / hz each
total=$(grep -oP 'of \K[0-9.]+m?s(?= total)' "$T/top.txt" | head -1)
want_ms=$(awk -v n="$NSAMPLES" -v hz="$HZ" 'BEGIN { printf "%d", n * int(1e9 / hz) / 1e6 }')
got_ms=$(awk -v t="$total" 'BEGIN { if (t ~ /ms$/) { sub(/ms$/, "", t); print int(t + 0.5) } else { sub(/s$/, "", t); print int(t * 1000 + 0.5) } }')
awk -v a="$got_ms" -v b="$want_ms" 'BEGIN { d = a - b; exit !(d <= 1 + b / 1000 && d >= -1 - b / 1000) }' ||
	fail "pprof's total is $total, the window has $NSAMPLES samples at $HZ Hz ($want_ms ms)"
ok "total $total: $NSAMPLES samples at $HZ Hz"

# -traces: fr-spin's stacks with their labels
pprof -traces "$T/cpu.pb.gz" >"$T/traces.txt" || fail "go tool pprof -traces failed"
traces_with " fr_spin_seventy\\|" "$T/traces.txt" | grep " main|" | grep "comm:  fr-spin|" | grep "pid:  $SPIN|" |
	grep "tid:  $SPIN|" >/dev/null || fail "no trace of fr-spin ($SPIN) through main with its labels: $(grep -m3 -B6 -A8 fr_spin "$T/traces.txt")"
ok "-traces: fr-spin's stack main -> fr_spin_seventy with pid, tid, comm labels"

# -raw: the mapping of fr-spin has its build id
bid=$(readelf -n "$HELPERS/fr-spin" | awk '/Build ID/ { print $3 }')
pprof -raw "$T/cpu.pb.gz" >"$T/raw.txt" || fail "go tool pprof -raw failed"
grep -E "fr-spin" "$T/raw.txt" | grep "$bid" >/dev/null ||
	fail "fr-spin's mapping lacks its build id $bid: $(grep -A20 '^Mappings' "$T/raw.txt" | head -20)"
ok "-raw: fr-spin's mapping carries build id $bid"

# the store and a bundle give the same profile
"$FRCTL" --config "$T/fr.conf" --store "$T/store" dump --incident "$ID" --format pprof -o "$T/store.pb.gz" ||
	fail "dump --incident --format pprof failed"
"$FRCTL" --config "$T/fr.conf" dump --input "$INC" -o "$T/b.frb" || fail "bundle failed"
"$FRCTL" --config "$T/fr.conf" dump --input "$T/b.frb" --format pprof -o "$T/bundle.pb.gz" || fail "pprof of a bundle failed"
for f in store bundle; do
	pprof -top "$T/$f.pb.gz" | awk '/flat%/ { hdr = 1; next } hdr' >"$T/$f.top"
	awk '/flat%/ { hdr = 1; next } hdr' "$T/top.txt" | diff -q - "$T/$f.top" >/dev/null ||
		fail "the $f's profile differs from the incident file's: $(diff <(awk '/flat%/ { hdr = 1; next } hdr' "$T/top.txt") "$T/$f.top" | head)"
done
ok "the same profile from the store (--incident) and from a bundle"

# --offcpu: the read on a pipe weighs its blocked time
"$FRCTL" --config "$T/fr.conf" dump --input "$INC" --format pprof --offcpu -o "$T/off.pb.gz" || fail "--offcpu pprof failed"
pprof -top "$T/off.pb.gz" >"$T/off-top.txt" || fail "go tool pprof -top of the off-CPU profile failed"
grep -q '^Type: off-cpu$' "$T/off-top.txt" || fail "off-CPU profile type: $(head -5 "$T/off-top.txt")"
pprof -traces -tagfocus "pid=$WAIT" "$T/off.pb.gz" >"$T/off-traces.txt" || fail "-traces of the off-CPU profile failed"
UFRAME=wait_for_input
task_work_here || UFRAME=read
trace=$(traces_with " (__libc_)?$UFRAME\\|" "$T/off-traces.txt" | head -1)
[ -n "$trace" ] || fail "fr-wait's off-CPU stacks have no $UFRAME: $(head -30 "$T/off-traces.txt")"
dur=$("$FRCTL" --config "$T/fr.conf" dump --input "$INC" --type offcpu --pid "$WAIT" --format json |
	jq -s 'map(select(.syscall == "read" and .tid == .pid)) | max_by(.duration_ns).duration_ns')
# the weight: the first figure of the block ("1.50s   anon_pipe_read")
w=$(echo "$trace" | tr '|' '\n' | awk '$1 ~ /^[0-9.]+(ms|s)$/ { t = $1; if (t ~ /ms$/) { sub(/ms$/, "", t); print t / 1000 } else { sub(/s$/, "", t); print t }; exit }')
awk -v a="$w" -v b="$dur" 'BEGIN { d = a * 1e9 - b; if (d < 0) d = -d; exit !(d <= b / 100) }' ||
	fail "fr-wait's heaviest off-CPU trace weighs $w s, its read blocked $dur ns"
ok "--offcpu: fr-wait's read on a pipe, ${w} s through $UFRAME"

# bad input: one line, exit 2
"$FRCTL" --config "$T/fr.conf" dump --input "$INC" --format json --offcpu >/dev/null 2>"$T/err" && fail "--offcpu with json accepted"
grep -q 'folded or pprof' "$T/err" || fail "--offcpu with json: $(cat "$T/err")"
"$FRCTL" --config "$T/fr.conf" --store "$T/store" dump -f --format pprof >/dev/null 2>"$T/err" && fail "-f --format pprof accepted"
grep -q 'pprof profile is a file' "$T/err" || fail "-f --format pprof: $(cat "$T/err")"
ok "bad input refused in one line"
