#!/bin/bash
# Python frames (issue 47), with Debian's own /usr/bin/python3.11 as
# shipped (stripped, no debug package) running tests/kernel/py-work.py:
#   (a) CPU samples of main -> handle -> parse -> tokenize: >= 95 % of
#       the samples of its hot loop show the four Python frames in that
#       order, each with its file and line, in place of the interpreter's
#       frames: native frames leaf side of them (str.split's, not the
#       kernel's), then <module>, then PyEval_EvalCode (the interpreter's
#       caller), then native frames only;
#   (b) off-CPU: a 1.5 s socket recv in wait_for_backend and a 1.2 s
#       time.sleep in nap_between_tries name those functions and lines;
#       the recv's waker, a Timer thread, in reply_from_backend (where
#       the kernel refuses BPF task work from sched_switch, task_work_here
#       in lib.sh, the waits have no Python frames: only the waker's);
#   (c) two threads in spin_alpha and spin_beta: each thread's samples
#       name its own function, never the other's;
#   (d) ten python3.11 processes of 100 ms each, read after they exited:
#       their samples name brief_work;
#   (f) a crash: render_page's ctypes read of address 0 is the crash
#       stack's Python frame under the native ones (the signal record);
#   (e) a python3.11 in a mount namespace of its own, its interpreter a
#       copy there (another inode, found by the daemon as it runs) and its
#       script on a tmpfs only that namespace sees: named;
#   (g) a CPython of a version flightrec does not know (3.12: fr-py-312,
#       tests/helpers/fr-py-fake.c): its samples keep their native frames
#       and name no Python function, the executable is counted in frctl
#       status and logged once; the same program claiming 3.11 (fr-py-311)
#       is walked and named, so a daemon that guessed would name it too;
#   - Perfetto and the text dump of the hot loop: the same samples name
#     tokenize (FILE:LINE) <- parse <- handle <- main as the JSON does;
#     the text dump's --stacks prints the recv's wait_for_backend (FILE:LINE);
#   - pprof of the hot loop: go tool pprof -top lists the four functions,
#     -traces shows them with their files and lines;
#   - the HTML report's flame graph, in Chromium, draws them (screenshot
#     kept: BUILD/test-artifacts/python-flame.png);
#   - frctl status: the executable known, stacks walked, frames named;
#     its text says what its JSON says, failed reads apart.
# Each fails on a daemon without Python frames, (g) on one that guesses.
BUILD=$1
PY312=$2
PY311=$3
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3.11
WORK="$(cd "$(dirname "$0")" && pwd)/py-work.py"
[ -x "$PY" ] || fail "$PY is not installed (Debian 12's python3.11)"
cp "$WORK" "$T/work.py"
WORK="$T/work.py"

cat >"$T/fr.conf" <<CONF
store = { size = "32M"; segments = 4; sync_interval = "200ms"; };
sources = { sched = { offcpu_threshold = "100ms"; }; };
CONF
TW=1
task_work_here || TW=0
start_daemon "$T/fr.conf"

# the Python frames of a record, innermost first: "name@file:line"
PYFRAMES='[.stack // [] | .[] | select(.kind == "python") | "\(.sym)@\(.file):\(.line)"]'
# stacks the daemon counts as shed under load: the parser's (lib.sh), and
# off-CPU stacks whose user part was not copied (slots busy, unreadable);
# and the stacks the unwinder counts as failed: the process's mappings
# not read yet, or sampled in another image (a sample just after an exec
# read before the exec record: CI run 69, (e), one sample of the
# container's python, exec'd by sh in a namespace of its own)
stacks_shed() {
	echo $(($(parser_shed) + $("$FRCTL" --store "$T/store" status --json |
		jq '(.offcpu_stacks | (.busy // 0) + (.unreadable // 0)) + (.sampler.unwind.failed // 0)')))
}
# records dropped in full rings, wakers dropped or recorded without
records_lost() {
	"$FRCTL" --store "$T/store" status --json |
		jq '([.sources[]?.dropped // 0] | add // 0) + (.wakers.dropped // 0) + (.wakers.missing // 0)'
}
dump_pid() { "$FRCTL" --store "$T/store" dump --pid "$1" --format json 2>/dev/null; }
line_of() { grep -n "^def $1(" "$WORK" | cut -d: -f1; }
# the line of the call that the function on line $1 makes first, matching $2
call_line() { awk -v from="$1" -v re="$2" 'NR > from && $0 ~ re { print NR; exit }' "$WORK"; }

# (a) the hot loop
"$PY" "$WORK" hot 4 &
HOT=$!
PIDS="$PIDS $HOT"
wait "$HOT" || fail "the hot loop failed"
sleep 0.5
dump_pid "$HOT" >"$T/hot.json"
L_TOK=$(call_line "$(line_of tokenize)" 'split')
L_PARSE=$(call_line "$(line_of parse)" 'tokenize\(')
L_HANDLE=$(call_line "$(line_of handle)" 'parse\(')
L_MAIN=$(call_line "$(line_of main)" 'handle\(')
WANT="[\"tokenize@$WORK:$L_TOK\",\"parse@$WORK:$L_PARSE\",\"handle@$WORK:$L_HANDLE\",\"main@$WORK:$L_MAIN\"]"
# samples of the loop: from 0.3 s after the first (the interpreter's start,
# and the text being made, before it)
jq -s --argjson want "$WANT" "$JQ_NS"'
	def pyf: [.stack[] | select(.kind == "python") | "\(.sym)@\(.file):\(.line)"];
	# the index in .stack of the first frame for which f is true
	def at(f): [.stack[] | f] | index(true);
	# <module>, then PyEval_EvalCode, then native frames only, one at least
	def rootside: at(.kind == "python" and .sym == "<module>") as $m |
		at(.kind != "python" and (.sym // "" | startswith("PyEval_EvalCode"))) as $e |
		$m != null and $e != null and $m < $e and $e < (.stack | length) - 1 and
		all(.stack[$m + 1:][]; .kind != "python");
	[.[] | select(.type == "sample")] as $s | ($s[0].time | ns) as $t0 |
	[$s[] | select((.time | ns) > $t0 + 3e8)] as $loop |
	[$loop[] | select((pyf)[0:4] == $want and ((pyf)[4] // "" | startswith("<module>@")) and rootside)] as $good |
	# user frames leaf side of the first Python frame (the kernel frames come first)
	[$loop[] | (.kernel_frames // 0) as $k | at(.kind == "python") | select(. != null and . > $k)] as $leafside |
	{ loop: ($loop | length), good: ($good | length), native_leaf: ($leafside | length),
	  shed: ([$loop[] | select((.stack // []) as $f | ($f | length) == (.kernel_frames // 0) + 2 and $f[-1].sym == "[unwind failed]")] | length),
	  eval_left: ([$loop[] | .stack[] | select((.sym // "") | startswith("_PyEval_EvalFrameDefault"))] | length) }' \
	<"$T/hot.json" >"$T/hot.sum" || fail "jq over the hot loop's samples failed"
read -r LOOP GOOD LEAF EVAL SHED < <(jq -r '"\(.loop) \(.good) \(.native_leaf) \(.eval_left) \(.shed)"' "$T/hot.sum")
[ "$LOOP" -ge 100 ] || fail "(a) only $LOOP samples of the 4 s hot loop"
# A sample the daemon did not give its parser, past its time budget (a
# loaded machine: its budget is wall time), is its leaf and [unwind
# failed], counted as such: left out of the share, at most that many
unwound_not=$(stacks_shed)
[ "$SHED" -le "$unwound_not" ] ||
	fail "(a) $SHED samples [unwind failed] but $unwound_not stacks are counted shed or failed"
[ "$SHED" -eq 0 ] || echo "note: $SHED samples not unwound: the parser was over its time budget ($unwound_not counted)"
LOOP=$((LOOP - SHED))
[ "$LOOP" -ge 80 ] || fail "(a) only $LOOP samples of the 4 s hot loop unwound ($SHED over the parser's budget)"
if [ $((GOOD * 100)) -lt $((LOOP * 95)) ]; then
	jq -c "$PYFRAMES" "$T/hot.json" | sort | uniq -c | sort -rn | head -5 >&2
	jq -c 'select(.type == "sample") | [.stack[].sym]' "$T/hot.json" | tail -3 >&2
	fail "(a) $GOOD of $LOOP samples show $WANT, then <module>, PyEval_EvalCode and native frames only (want >= 95 %)"
fi
[ "$EVAL" -eq 0 ] || fail "(a) $EVAL interpreter frames left in the loop's samples: each is its Python frames"
[ $((LEAF * 2)) -ge "$LOOP" ] || fail "(a) only $LEAF of $LOOP samples have user native frames leaf side of tokenize (str.split)"
ok "(a) $GOOD of $LOOP samples: tokenize:$L_TOK <- parse:$L_PARSE <- handle:$L_HANDLE <- main:$L_MAIN <- <module> <- PyEval_EvalCode; $LEAF under a C function"

# (b) waits.  A miss is tried again, twice at most: three misses fail.
# A miss can be load the daemon counts (the wait's stack over the
# parser's time budget, its user stack not copied, a ring full) or a
# timing one nothing counts (CI run 67, ASan: the recv's record was not
# there, nothing shed); each try says which, with what was lost.
L_RECV=$(call_line "$(line_of wait_for_backend)" 'recv')
L_NAP=$(call_line "$(line_of nap_between_tries)" 'sleep')
L_REPLY=$(call_line "$(line_of reply_from_backend)" 'send')
for try in 1 2 3; do
	shed0=$(stacks_shed)
	lost0=$(records_lost)
	"$PY" "$WORK" wait &
	WAITP=$!
	PIDS="$PIDS $WAITP"
	wait "$WAITP" || fail "the waits failed"
	sleep 0.5
	dump_pid "$WAITP" | jq -c "select(.type == \"offcpu\") | {d: .duration_ns, p: $PYFRAMES,
		w: [.waker.stack // [] | .[] | select(.kind == \"python\") | \"\(.sym)@\(.file):\(.line)\"]}" >"$T/wait.json"
	miss=
	if [ "$TW" = 1 ]; then
		jq -s -e --arg f "wait_for_backend@$WORK:$L_RECV" 'any(.[]; .d > 1400000000 and .p[0] == $f and (.p[1] | startswith("wait@")))' \
			"$T/wait.json" >/dev/null || miss="no 1.5 s offcpu record in wait_for_backend:$L_RECV <- wait"
		jq -s -e --arg f "nap_between_tries@$WORK:$L_NAP" 'any(.[]; .d > 1100000000 and .p[0] == $f)' \
			"$T/wait.json" >/dev/null || miss="no 1.2 s offcpu record in nap_between_tries:$L_NAP"
		jq -s -e --arg f "wait_for_backend@$WORK:$L_RECV" --arg w "reply_from_backend@$WORK:$L_REPLY" \
			'any(.[]; .p[0] == $f and .w[0] == $w)' "$T/wait.json" >/dev/null ||
			miss="the recv's waker is not reply_from_backend:$L_REPLY"
	else
		# no task work: the waits carry no Python frames (no user stack to
		# walk them from); the waker's, from the wakers' program, still do
		jq -s -e 'any(.[]; .d > 1400000000 and .p == []) and any(.[]; .d > 1100000000 and .d < 1400000000 and .p == [])' \
			"$T/wait.json" >/dev/null || miss="no 1.5 s and 1.2 s offcpu records without Python frames"
		jq -s -e --arg w "reply_from_backend@$WORK:$L_REPLY" 'any(.[]; .d > 1400000000 and .w[0] == $w)' \
			"$T/wait.json" >/dev/null || miss="the recv's waker is not reply_from_backend:$L_REPLY"
	fi
	[ -n "$miss" ] || break
	shed=$(($(stacks_shed) - shed0))
	lost=$(($(records_lost) - lost0))
	cat "$T/wait.json" >&2
	if [ "$try" -eq 3 ]; then
		"$FRCTL" --store "$T/store" dump --pid "$WAITP" --type offcpu --stacks >&2 || true
		fail "(b) $miss (three tries; the last: stacks shed $shed, records or wakers lost $lost)"
	fi
	echo "note: try $try: $miss (meanwhile stacks shed: $shed, records or wakers lost: $lost): again"
done
if [ "$TW" = 1 ]; then
	ok "(b) the recv names wait_for_backend:$L_RECV, its waker reply_from_backend:$L_REPLY, the sleep nap_between_tries:$L_NAP"
else
	ok "(b) no task work here ($TW_REASON): the waits have no Python frames; the recv's waker is reply_from_backend:$L_REPLY"
fi

# (c) threads
"$PY" "$WORK" threads 3 >"$T/tids" &
THR=$!
PIDS="$PIDS $THR"
wait "$THR" || fail "the threads failed"
sleep 0.5
read -r TA TB <"$T/tids"
dump_pid "$THR" | jq -c "select(.type == \"sample\") | {tid, p: $PYFRAMES}" >"$T/threads.json"
for pair in "$TA spin_alpha spin_beta" "$TB spin_beta spin_alpha"; do
	set -- $pair
	own=$(jq -s --argjson t "$1" --arg f "$2" '[.[] | select(.tid == $t and any(.p[]; startswith($f + "@")))] | length' "$T/threads.json")
	other=$(jq -s --argjson t "$1" --arg f "$3" '[.[] | select(.tid == $t and any(.p[]; startswith($f + "@")))] | length' "$T/threads.json")
	[ "$own" -ge 20 ] || fail "(c) thread $1: only $own samples in $2"
	[ "$other" -eq 0 ] || fail "(c) thread $1: $other samples name $3, the other thread's function"
done
ok "(c) each thread's samples name its own function only"

# (d) short-lived processes
BRIEF=()
for _ in $(seq 10); do
	"$PY" "$WORK" brief &
	p=$!
	wait "$p" || fail "a brief python failed"
	BRIEF+=("$p")
done
sleep 0.5
named=0
for p in "${BRIEF[@]}"; do
	dump_pid "$p" | jq -c "select(.type == \"sample\") | $PYFRAMES" >"$T/brief.json"
	grep -q "\"brief_work@$WORK:[0-9]" "$T/brief.json" && named=$((named + 1))
	! grep -q '"null@' "$T/brief.json" || fail "(d) a Python frame of $p without a name: $(grep -m1 null@ "$T/brief.json")"
done
[ "$named" -ge 8 ] || fail "(d) only $named of 10 processes of 100 ms have a sample in brief_work"
ok "(d) $named of 10 processes of 100 ms, read after they exited, name brief_work"

# (f) a crash
"$PY" "$WORK" crash 2>/dev/null &
CRASH=$!
wait "$CRASH" && fail "the crash did not crash"
sleep 0.5
L_RENDER=$(call_line "$(line_of render_page)" 'string_at')
"$FRCTL" --store "$T/store" dump --type signal --format json 2>/dev/null |
	jq -c "select(.pid == $CRASH) | {sig: .signal, n: ([.stack[] | select(.kind != \"python\")] | length), p: $PYFRAMES}" >"$T/crash.json"
jq -s -e --arg f "render_page@$WORK:$L_RENDER" \
	'any(.[]; .sig == "SIGSEGV" and .n > 0 and ((.p | map(. == $f) | index(true)) as $i |
		$i != null and (.p[$i + 1] | startswith("<module>@"))))' \
	"$T/crash.json" >/dev/null || { cat "$T/crash.json" >&2; fail "(f) the crash stack does not name render_page:$L_RENDER"; }
ok "(f) the SIGSEGV's stack names render_page:$L_RENDER <- <module>"

# (e) a container: its own mount namespace, interpreter and script
mkdir -p "$T/ctr"
cp "$PY" "$T/ctr/python3.11"
shed0=$(stacks_shed)
unshare --mount --propagation private sh -c '
	mount -t tmpfs ctr /mnt && cp "$2" /mnt/app.py &&
	mount --bind "$1/ctr/python3.11" /usr/bin/python3.11 &&
	exec /usr/bin/python3.11 /mnt/app.py hot 3' sh "$T" "$WORK" &
CTR=$!
PIDS="$PIDS $CTR"
wait "$CTR" || fail "the container's python failed"
sleep 0.5
dump_pid "$CTR" | jq -c "select(.type == \"sample\") | $PYFRAMES" >"$T/ctr.json"
total=$(wc -l <"$T/ctr.json")
good=$(grep -c '"tokenize@/mnt/app.py:[0-9]*","parse@/mnt/app.py' "$T/ctr.json" || true)
[ "$total" -ge 80 ] || fail "(e) only $total samples of the container's python"
# samples past the parser's time budget are [unwind failed], counted: as
# in (a), left out of the share, at most as many as counted
shed=$(dump_pid "$CTR" | jq -s '[.[] | select(.type == "sample" and (.stack | length) == (.kernel_frames // 0) + 2 and
	.stack[-1].sym == "[unwind failed]")] | length')
[ "$shed" -le $(($(stacks_shed) - shed0)) ] || fail "(e) $shed samples [unwind failed], more than the stacks shed or failed ($(($(stacks_shed) - shed0)))"
[ "$shed" -eq 0 ] || echo "note: (e) $shed samples not unwound: the parser was over its time budget"
total=$((total - shed))
[ "$total" -ge 40 ] || fail "(e) only $total samples of the container's python unwound ($shed over the parser's budget)"
[ $((good * 100)) -ge $((total * 80)) ] || fail "(e) $good of $total samples name tokenize <- parse in /mnt/app.py"
ok "(e) $good of $total samples of the container's python name tokenize <- parse in /mnt/app.py"

# (g) a CPython whose version flightrec does not know.  fr-py-312 runs
# twice (one executable: one line in the log), spinning in its native
# _PyEval_EvalFrameDefault; fr-py-311, the same program and state claiming
# 3.11, shows that state is one a 3.11 walk reads: a daemon that walked
# the 3.12 as a 3.11 would name its fake_frame the same way.
py_status() { "$FRCTL" --store "$T/store" status --json | jq ".python.$1"; }
unknown0=$(py_status executables_unknown_version)
shed0=$(stacks_shed)
G312=()
for secs in 3 1; do
	"$PY312" "$secs" &
	p=$!
	PIDS="$PIDS $p"
	wait "$p" || fail "fr-py-312 failed"
	G312+=("$p")
done
"$PY311" 2 &
G311=$!
PIDS="$PIDS $G311"
wait "$G311" || fail "fr-py-311 failed"
sleep 0.5
unknown=$(($(py_status executables_unknown_version) - unknown0))
for p in "${G312[@]}"; do dump_pid "$p"; done >"$T/g312.json"
# samples; Python frames; samples that keep their native frames,
# _PyEval_EvalFrameDefault then main, past the kernel's; [unwind failed]
jq -s -r '
	def at(re): .stack[.kernel_frames // 0:] | map(.sym // "" | test(re)) | index(true);
	[.[] | select(.type == "sample")] as $s |
	[($s | length), ([$s[].stack[] | select(.kind == "python")] | length),
	 ([$s[] | at("^_PyEval_EvalFrameDefault(\\+|$)") as $e | at("^main(\\+|$)") as $m |
		select($e != null and $m != null and $e < $m)] | length),
	 ([$s[] | select((.stack | length) == (.kernel_frames // 0) + 2 and .stack[-1].sym == "[unwind failed]")] | length)] |
	map(tostring) | join(" ")' "$T/g312.json" >"$T/g312.sum" || fail "jq over fr-py-312's samples failed"
read -r N PYF KEPT SHED <"$T/g312.sum"
[ "$N" -ge 40 ] || fail "(g) only $N samples of fr-py-312's 4 s"
[ "$PYF" -eq 0 ] || { jq -c "$PYFRAMES" "$T/g312.json" | sort | uniq -c >&2; fail "(g) $PYF Python frames in fr-py-312's samples: guessed"; }
# the samples the parser had no time for are [unwind failed] (as in (a))
[ "$SHED" -le $(($(stacks_shed) - shed0)) ] || fail "(g) $SHED samples [unwind failed], more than the stacks shed"
[ $((KEPT * 100)) -ge $(((N - SHED) * 90)) ] ||
	{ jq -c 'select(.type == "sample") | [.stack[].sym]' "$T/g312.json" | tail -3 >&2;
	  fail "(g) $KEPT of $((N - SHED)) samples of fr-py-312 keep _PyEval_EvalFrameDefault <- main"; }
[ "$unknown" -ge 1 ] || fail "(g) status: executables_unknown_version went up by $unknown"
logged=$(grep -c 'fr-py-312 runs CPython 3.12, whose frames flightrec does not know' "$T/daemon.log" || true)
[ "$logged" -eq 1 ] || fail "(g) the daemon logged fr-py-312's version $logged times (want once)"
dump_pid "$G311" | jq -c 'select(.type == "sample") | [.stack[] | select(.kind == "python") | "\(.sym)@\(.file)"]' >"$T/g311.json"
n311=$(wc -l <"$T/g311.json")
named=$(grep -c '^\["fake_frame@/fr-py-fake.py"\]$' "$T/g311.json" || true)
[ $((named * 2)) -ge "$n311" ] && [ "$n311" -ge 20 ] ||
	fail "(g) control: $named of $n311 samples of fr-py-311 name fake_frame: a 3.11 walk does not read the fake state"
ok "(g) fr-py-312: $KEPT of $N samples native (_PyEval_EvalFrameDefault <- main), no Python frame, counted, logged once; fr-py-311: $named of $n311 name fake_frame"

# Perfetto and text of the hot loop: the samples that name the four
# functions in the JSON, as "name (file:line)" frames in a row, name them
# so in Perfetto's sample stacks and in the text dump
SEQ="tokenize ($WORK:$L_TOK)|parse ($WORK:$L_PARSE)|handle ($WORK:$L_HANDLE)|main ($WORK:$L_MAIN)"
dump_pid "$HOT" | jq -s --arg seq "|$SEQ|" '[.[] | select(.type == "sample") |
	"|" + ([.stack[] | if .kind == "python" then "\(.sym) (\(.file):\(.line))" else .sym // "" end] | join("|")) + "|" |
	select(contains($seq))] | length' >"$T/seq.json"
"$FRCTL" --store "$T/store" dump --pid "$HOT" --format perfetto -o "$T/hot.perfetto.json" || fail "dump --format perfetto failed"
jq --arg seq "|$SEQ|" '[.traceEvents[] | select(.name == "sample") | "|" + (.args.stack | join("|")) + "|" |
	select(contains($seq))] | length' "$T/hot.perfetto.json" >"$T/seq.perfetto" || fail "jq over the Perfetto trace failed"
"$FRCTL" --store "$T/store" dump --pid "$HOT" --type sample --stacks >"$T/hot.txt" || fail "dump --stacks failed"
n_text=$(grep -cF " ${SEQ//|/ <- } <- " "$T/hot.txt" || true)
read -r n_json <"$T/seq.json"
read -r n_perfetto <"$T/seq.perfetto"
[ "$n_json" -ge "$GOOD" ] || fail "the JSON has $n_json samples naming $SEQ ((a) found $GOOD)"
[ "$n_perfetto" -eq "$n_json" ] ||
	{ jq -c '[.traceEvents[] | select(.name == "sample") | .args.stack] | .[-1]' "$T/hot.perfetto.json" >&2;
	  fail "Perfetto: $n_perfetto samples name ${SEQ//|/ <- }, the JSON $n_json"; }
[ "$n_text" -eq "$n_json" ] || { grep sample "$T/hot.txt" | tail -2 >&2; fail "text: $n_text samples name ${SEQ//|/ <- }, the JSON $n_json"; }
"$FRCTL" --store "$T/store" dump --pid "$WAITP" --type offcpu --stacks >"$T/wait.txt" || fail "dump --stacks failed"
UWANT="    wait_for_backend ($WORK:$L_RECV)"
[ "$TW" = 1 ] || UWANT="    [user stack not captured]"
grep -qxF "$UWANT" "$T/wait.txt" ||
	{ cat "$T/wait.txt" >&2; fail "text --stacks: no line '$UWANT' under the recv"; }
ok "Perfetto and text: $n_json samples name tokenize ($WORK:$L_TOK) <- parse <- handle <- main; --stacks the recv's wait_for_backend"

# pprof of the hot loop
export HOME="$T" GOCACHE="$T/go-cache" PPROF_TMPDIR="$T" GOFLAGS=-mod=mod GOTOOLCHAIN=local
"$FRCTL" --store "$T/store" dump --pid "$HOT" --format pprof -o "$T/hot.pb.gz" || fail "dump --format pprof failed"
go tool pprof -symbolize=none -top "$T/hot.pb.gz" >"$T/top.txt" 2>>"$T/pprof.err" || fail "pprof -top failed: $(tail -3 "$T/pprof.err")"
for f in tokenize parse handle main; do
	grep -qE "[[:space:]]$f$" "$T/top.txt" || { cat "$T/top.txt" >&2; fail "pprof -top does not list $f"; }
done
go tool pprof -symbolize=none -lines -traces "$T/hot.pb.gz" >"$T/traces.txt" 2>>"$T/pprof.err" || fail "pprof -traces failed"
grep -qE "tokenize $WORK:$L_TOK" "$T/traces.txt" || { head -30 "$T/traces.txt" >&2; fail "pprof -traces lacks tokenize at $WORK:$L_TOK"; }
ok "pprof -top lists tokenize, parse, handle, main; -traces their files and lines"

# the HTML flame graph, drawn by Chromium
ART="$BUILD/test-artifacts"
mkdir -p "$ART" "$T/chromium"
"$FRCTL" --store "$T/store" report --pid "$HOT" --format html -o "$T/report.html" || fail "report --format html failed"
/usr/bin/python3 "$(dirname "$0")/../tools/page-check.py" "$T/report.html" "$T/chromium" \
	--screenshot "$ART/python-flame.png" >"$T/page.json" || fail "page-check failed"
jq -e '[.flames[].names[]] | any(test("^tokenize \\(")) and any(test("^handle \\("))' "$T/page.json" >/dev/null ||
	fail "the page's flame graphs draw no tokenize or handle ($(jq -c '[.flames[].names[]] | .[0:12]' "$T/page.json"))"
ok "the report's flame graph draws the Python functions (screenshot: $ART/python-flame.png)"

# the counters: python3.11, its copy in the container, fr-py-311
"$FRCTL" --store "$T/store" status --json | jq .python >"$T/status.json"
jq -e '.executables >= 3 and .executables_unknown_version >= 1 and .stacks.walked > 300 and .frames > 1000 and
	.frames_unnamed == 0' "$T/status.json" >/dev/null ||
	{ cat "$T/status.json" >&2; fail "status python counters"; }
ok "status: $(jq -c '{executables, executables_unknown_version, walked: .stacks.walked, frames, frames_unnamed, descriptions}' "$T/status.json")"
# The text says what the JSON says, a failed read apart from no Python
# state: each of its numbers between the JSON's before and after it
"$FRCTL" --store "$T/store" status >"$T/status.txt" || fail "status failed"
"$FRCTL" --store "$T/store" status --json | jq .python >"$T/status2.json"
re='python: ([0-9]+) interpreters walked, ([0-9]+) of another version; ([0-9]+) stacks walked, ([0-9]+) cut, ([0-9]+) without Python state, ([0-9]+) with a failed read; ([0-9]+) frames, ([0-9]+) unnamed'
[[ "$(grep -m1 ' python: ' "$T/status.txt")" =~ $re ]] ||
	{ grep python "$T/status.txt" >&2; fail "the text status has no python line as $re"; }
i=1
for f in .executables .executables_unknown_version .stacks.walked .stacks.cut '.stacks.no_thread + .stacks.no_frame' \
	.stacks.unreadable .frames .frames_unnamed; do
	lo=$(jq "$f" "$T/status.json")
	hi=$(jq "$f" "$T/status2.json")
	[ "$lo" -le "${BASH_REMATCH[$i]}" ] && [ "${BASH_REMATCH[$i]}" -le "$hi" ] ||
		fail "the text status says ${BASH_REMATCH[$i]} where the JSON says $f = $lo, then $hi: $(grep ' python: ' "$T/status.txt")"
	i=$((i + 1))
done
ok "status text: $(grep -m1 -o 'python: .*' "$T/status.txt")"
stop_daemon
