#!/bin/bash
# A 1 MB library whose compressed debug section says it inflates to
# 1 GiB (issue 42), run by nobody: libdw would inflate it into the
# daemon's heap as soon as the symbolizer looked for inlined functions or
# the unwinder for .debug_frame.  The daemon reads the sections' headers
# first (lib/elf-inflated.c) and refuses the file: the peak RSS of the
# daemon and its parser helper stays under the unit's MemoryMax=, status
# answers within 1 s throughout, no
# record is dropped, the refusals are counted, and the library's frames
# are still named from its symbol table.  Then frctl, which names frames
# stored unnamed from debug files when it prints them (lib/late-names.c):
# the same library stripped, run under the same daemon, and the bomb as
# its debug file in --debug-dir.  frctl refuses the file's DWARF before
# libdw inflates it (its peak RSS stays under 256 MiB; it would be over
# 1 GiB), and names the frames from the file's symbol table all the same
# (bomb_inner, which the stripped library's dynamic symbols do not have).
# Usage: test-debug-bomb.sh BUILD_DIR SOURCE_DIR
BUILD=$1
SRC=$2
. "$(dirname "$0")/lib.sh"

BOMB=
cleanup_bomb() {
	[ -n "$BOMB" ] && kill -KILL "$BOMB" 2>/dev/null
	cleanup
}
trap cleanup_bomb EXIT

chmod 0755 "$T"
mkdir -m 0755 "$T/nobody"
cat >"$T/nobody/bomb.c" <<'C'
#include <time.h>
/* not exported: stripped, the library has no name for it */
static __attribute__((noinline)) double bomb_inner(double secs)
{
	struct timespec a, b;
	volatile double x = 0;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		for (int i = 0; i < 100000; i++)
			x += i * 0.5;
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < secs);
	return x;
}

double bomb_spin(double secs)
{
	return bomb_inner(secs) + 1;
}
C
cat >"$T/nobody/main.c" <<'C'
#include <stdlib.h>
double bomb_spin(double secs);
int main(int argc, char **argv)
{
	return bomb_spin(atof(argv[1])) < 0;
}
C
gcc -g -O1 -shared -fPIC -o "$T/nobody/libbomb.so" "$T/nobody/bomb.c"
gcc -o "$T/nobody/fr-bomb" "$T/nobody/main.c" -L"$T/nobody" -lbomb -Wl,-rpath,'$ORIGIN'
python3 "$SRC/tests/kernel/debug-bomb.py" "$T/nobody/libbomb.so" $((1 << 30))
# the same library stripped (in s/, with its program as fr-bomb-s), the
# bomb its debug file
split_debug "$T/nobody/libbomb.so" "$T/nobody/s" "$T/dbg"
cp "$T/nobody/fr-bomb" "$T/nobody/s/fr-bomb-s"
[[ "$(readelf -SW "$DBG")" =~ \.debug_ranges[^$'\n']*\ C\  ]] || fail "the debug file lost the bomb: $(readelf -SW "$DBG" | grep debug_ranges)"
chown -R 65534:65534 "$T/nobody"
ls -l "$T/nobody/libbomb.so"

cat >"$T/fr.conf" <<CONF
store = { size = "16M"; segments = 4; sync_interval = "200ms"; };
sources = { sample = { hz = 97; }; };
CONF
start_daemon "$T/fr.conf"

dropped() { jq '[.per_cpu[].dropped] | add' "$T/st.json"; }
status() { timeout 1 "$FRCTL" --store "$T/store" status --json >"$T/st.json"; }
status || fail "no status before the bomb"
D0=$(dropped)

as_nobody "$T/nobody/fr-bomb" 3 &
BOMB=$!
n=0
while kill -0 "$BOMB" 2>/dev/null; do
	status || fail "status did not answer within 1 s (check $n)"
	n=$((n + 1))
	sleep 0.2
done
wait "$BOMB" || fail "fr-bomb failed"
BOMB=
ok "status answered within 1 s $n times while nobody ran code from the bomb"
sleep 0.5
status || fail "no status after the bomb"
# the unit's MemoryMax= (512M) bounds the daemon and its parser helper
# together; the bomb says 1 GiB
PARSE=$(jq -r '.sampler.parser.pid // empty' "$T/st.json")
[ -n "$PARSE" ] || fail "no parser helper running: $(jq -c .sampler.parser "$T/st.json")"
HWM=$(awk '/^VmHWM:/ { print $2 }' "/proc/$DPID/status")
PHWM=$(awk '/^VmHWM:/ { print $2 }' "/proc/$PARSE/status")
[ $((HWM + PHWM)) -lt $((512 * 1024)) ] ||
	fail "peak RSS: daemon $((HWM / 1024)) MiB, parser $((PHWM / 1024)) MiB"
ok "peak RSS: daemon $((HWM / 1024)) MiB, parser $((PHWM / 1024)) MiB"
D1=$(dropped)
[ "$D1" -eq "$D0" ] || fail "records dropped: $D0 before, $D1 after"
jq -e '.sampler.unwind.files_too_big >= 1 and .sampler.symbols.debug_info_too_big >= 1' "$T/st.json" >/dev/null ||
	fail "the bomb was not refused and counted: $(jq -c '{unwind: (.sampler.unwind | {files_too_big}), symbols: (.sampler.symbols | {debug_info_too_big})}' "$T/st.json")"
ok "refused and counted: $(jq -c '{unwind: (.sampler.unwind | {files_too_big}), symbols: (.sampler.symbols | {debug_info_too_big})}' "$T/st.json")"
wait_for_record '.type == "sample" and .comm == "fr-bomb" and any(.stack[]?; (.sym // "") | startswith("bomb_inner"))' ||
	fail "no sample of fr-bomb in bomb_inner (named from its symbol table)"
ok "the bomb's frames are still named (bomb_inner)"

as_nobody "$T/nobody/s/fr-bomb-s" 2 || fail "fr-bomb-s failed"
wait_for_record '.type == "sample" and .comm == "fr-bomb-s" and any(.stack[]?; (.module // "") | endswith("libbomb.so"))' ||
	fail "no sample of fr-bomb-s in the stripped libbomb.so"
stop_daemon
rc=0
/usr/bin/time -f %M -o "$T/frctl.rss" "$FRCTL" --store "$T/store" dump --debug-dir "$T/dbg" --format json \
	>"$T/late.json" 2>"$T/late.err" || rc=$?
[ "$rc" -eq 0 ] || fail "frctl dump --debug-dir with the bomb: exit $rc: $(head -c 300 "$T/late.err")"
RSS=$(cat "$T/frctl.rss")
[ "$RSS" -lt $((256 * 1024)) ] || fail "frctl's peak RSS naming frames from the bomb: $((RSS / 1024)) MiB"
jq -e -s 'any(.[]; .comm == "fr-bomb-s" and any(.stack[]?; (.sym // "") | startswith("bomb_inner")))' "$T/late.json" >/dev/null ||
	fail "frctl did not name fr-bomb-s's frames from the bomb's symbol table: $(jq -c -s '[.[] | select(.comm == "fr-bomb-s") | .stack[]? | select((.module // "") | endswith("libbomb.so"))] | .[0:3]' "$T/late.json")"
ok "frctl named the stripped library's frames from the bomb (bomb_inner), peak RSS $((RSS / 1024)) MiB"
echo "debug-bomb: all checks passed"
