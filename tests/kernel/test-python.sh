#!/bin/bash
# Python frames (issue 47), with Debian's own /usr/bin/python3.11 as
# shipped (stripped, no debug package) running tests/kernel/py-work.py:
#   (a) CPU samples of main -> handle -> parse -> tokenize: >= 95 % of
#       the samples of its hot loop show the four Python frames in that
#       order, each with its file and line, in place of the interpreter's
#       frames: native frames leaf side of them (str.split's), <module>
#       and PyEval_EvalCode (the interpreter's caller) root side;
#   (b) off-CPU: a 1.5 s socket recv in wait_for_backend and a 1.2 s
#       time.sleep in nap_between_tries name those functions and lines;
#       the recv's waker, a Timer thread, in reply_from_backend;
#   (c) two threads in spin_alpha and spin_beta: each thread's samples
#       name its own function, never the other's;
#   (d) ten python3.11 processes of 100 ms each, read after they exited:
#       their samples name brief_work;
#   (f) a crash: render_page's ctypes read of address 0 is the crash
#       stack's Python frame under the native ones (the signal record);
#   (e) a python3.11 in a mount namespace of its own, its interpreter a
#       copy there (another inode, found by the daemon as it runs) and its
#       script on a tmpfs only that namespace sees: named;
#   - pprof of the hot loop: go tool pprof -top lists the four functions,
#     -traces shows them with their files and lines;
#   - the HTML report's flame graph, in Chromium, draws them (screenshot
#     kept: BUILD/test-artifacts/python-flame.png);
#   - frctl status: the executable known, stacks walked, frames named.
# Each fails on a daemon without Python frames.
BUILD=$1
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
start_daemon "$T/fr.conf"

# the Python frames of a record, innermost first: "name@file:line"
PYFRAMES='[.stack // [] | .[] | select(.kind == "python") | "\(.sym)@\(.file):\(.line)"]'
# stacks the daemon counts as shed under load: the parser's (lib.sh), and
# off-CPU stacks whose user part was not copied (slots busy, unreadable)
stacks_shed() {
	echo $(($(parser_shed) + $("$FRCTL" --store "$T/store" status --json |
		jq '.offcpu_stacks | (.busy // 0) + (.unreadable // 0)')))
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
	[.[] | select(.type == "sample")] as $s | ($s[0].time | ns) as $t0 |
	[$s[] | select((.time | ns) > $t0 + 3e8)] as $loop |
	[$loop[] | select((pyf)[0:4] == $want and ((pyf)[4] // "" | startswith("<module>@")) and
		([.stack[] | select(.kind != "python") | .sym // ""] | any(startswith("PyEval_EvalCode"))))] as $good |
	[$loop[] | .stack | map(.kind == "python") | index(true) | select(. != null and . > 0)] as $leafside |
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
	fail "(a) $SHED samples [unwind failed] but the parser counts $unwound_not stacks over budget or skipped"
[ "$SHED" -eq 0 ] || echo "note: $SHED samples not unwound: the parser was over its time budget ($unwound_not counted)"
LOOP=$((LOOP - SHED))
[ "$LOOP" -ge 80 ] || fail "(a) only $LOOP samples of the 4 s hot loop unwound ($SHED over the parser's budget)"
if [ $((GOOD * 100)) -lt $((LOOP * 95)) ]; then
	jq -c "$PYFRAMES" "$T/hot.json" | sort | uniq -c | sort -rn | head -5 >&2
	fail "(a) $GOOD of $LOOP samples show $WANT under <module> and PyEval_EvalCode (want >= 95 %)"
fi
[ "$EVAL" -eq 0 ] || fail "(a) $EVAL interpreter frames left in the loop's samples: each is its Python frames"
[ $((LEAF * 2)) -ge "$LOOP" ] || fail "(a) only $LEAF of $LOOP samples have native frames leaf side of tokenize (str.split)"
ok "(a) $GOOD of $LOOP samples: tokenize:$L_TOK <- parse:$L_PARSE <- handle:$L_HANDLE <- main:$L_MAIN <- <module> <- PyEval_EvalCode; $LEAF under a C function"

# (b) waits.  A miss that the daemon counts as load shed (the wait's
# stack over the parser's time budget, its user stack not copied) is
# tried again, twice at most; a miss with nothing counted fails at once.
L_RECV=$(call_line "$(line_of wait_for_backend)" 'recv')
L_NAP=$(call_line "$(line_of nap_between_tries)" 'sleep')
L_REPLY=$(call_line "$(line_of reply_from_backend)" 'send')
for try in 1 2 3; do
	shed0=$(stacks_shed)
	"$PY" "$WORK" wait &
	WAITP=$!
	PIDS="$PIDS $WAITP"
	wait "$WAITP" || fail "the waits failed"
	sleep 0.5
	dump_pid "$WAITP" | jq -c "select(.type == \"offcpu\") | {d: .duration_ns, p: $PYFRAMES,
		w: [.waker.stack // [] | .[] | select(.kind == \"python\") | \"\(.sym)@\(.file):\(.line)\"]}" >"$T/wait.json"
	miss=
	jq -s -e --arg f "wait_for_backend@$WORK:$L_RECV" 'any(.[]; .d > 1400000000 and .p[0] == $f and (.p[1] | startswith("wait@")))' \
		"$T/wait.json" >/dev/null || miss="no 1.5 s offcpu record in wait_for_backend:$L_RECV <- wait"
	jq -s -e --arg f "nap_between_tries@$WORK:$L_NAP" 'any(.[]; .d > 1100000000 and .p[0] == $f)' \
		"$T/wait.json" >/dev/null || miss="no 1.2 s offcpu record in nap_between_tries:$L_NAP"
	jq -s -e --arg f "wait_for_backend@$WORK:$L_RECV" --arg w "reply_from_backend@$WORK:$L_REPLY" \
		'any(.[]; .p[0] == $f and .w[0] == $w)' "$T/wait.json" >/dev/null ||
		miss="the recv's waker is not reply_from_backend:$L_REPLY"
	[ -n "$miss" ] || break
	shed=$(($(stacks_shed) - shed0))
	if [ "$shed" -eq 0 ] || [ "$try" -eq 3 ]; then
		cat "$T/wait.json" >&2
		"$FRCTL" --store "$T/store" dump --pid "$WAITP" --type offcpu --stacks >&2 || true
		fail "(b) $miss (try $try; stacks shed meanwhile: $shed)"
	fi
	echo "note: try $try: $miss, with $shed stacks shed meanwhile (counted): again"
done
ok "(b) the recv names wait_for_backend:$L_RECV, its waker reply_from_backend:$L_REPLY, the sleep nap_between_tries:$L_NAP"

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
[ $((good * 100)) -ge $((total * 80)) ] || fail "(e) $good of $total samples name tokenize <- parse in /mnt/app.py"
ok "(e) $good of $total samples of the container's python name tokenize <- parse in /mnt/app.py"

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

# the counters
"$FRCTL" --store "$T/store" status --json | jq .python >"$T/status.json"
jq -e '.executables >= 2 and .stacks.walked > 300 and .frames > 1000 and .frames_unnamed == 0' "$T/status.json" >/dev/null ||
	{ cat "$T/status.json" >&2; fail "status python counters"; }
ok "status: $(jq -c '{executables, walked: .stacks.walked, frames, frames_unnamed, descriptions}' "$T/status.json")"
stop_daemon
