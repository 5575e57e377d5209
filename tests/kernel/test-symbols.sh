#!/bin/bash
# Symbols that survive the process.  A program built with frame pointers
# spends 70 % of its CPU in fr_spin_seventy() and 30 % in fr_spin_thirty();
# it runs from a copy of its binary that is deleted before anything is
# read.  Then, with no /proc entry and no binary left:
#   - the folded output attributes 70 +- 10 % / 30 +- 10 % to those names,
#   - the same from a copy of the store in another directory, without the
#     kernel symbol snapshots (the chunks name their own user frames),
#     where the syscall loop's kernel frames are unnamed: chunks leave the
#     functions the store's snapshot names to it,
#   - the same from an incident file copied elsewhere, whose kernel frames
#     are named as the store names them (the incident carries them),
#   - report's hottest call path is fr-spin's in fr_spin_seventy, the
#     folded output's biggest stack, with about 70 % of its samples,
#   - json frames carry sym, module and offset; a syscall loop's samples
#     show kernel frames by name (the syscall entry path),
#   - the folded counts sum to the number of samples,
#   - the kernel symbol table of this boot is saved in the store,
#   - a child forked without an exec is named with its parent's mappings
#     (status: maps_inherited), not by reading its /proc/PID/maps.
BUILD=$1
HELPERS=$2
. "$(dirname "$0")/lib.sh"

cat >"$T/fr.conf" <<CONF
store = { size = "16M"; segments = 4; sync_interval = "200ms"; };
triggers = {
  rules = ( { name = "manual"; condition = "manual"; before = "30s"; after = "500ms"; } );
};
CONF
start_daemon "$T/fr.conf"

mkdir "$T/bin"
cp "$HELPERS/fr-spin" "$T/bin/fr-spin"
"$T/bin/fr-spin" 4 >"$T/spin.pid"
P=$(cat "$T/spin.pid")
"$BUILD/tests/bench/getppid-loop" 2000000 >/dev/null &
SYS=$!
wait $SYS
rm -rf "$T/bin"
[ ! -e "/proc/$P" ] || fail "fr-spin ($P) still has a /proc entry"
sleep 0.5
"$FRCTL" --store "$T/store" freeze --reason symbols >/dev/null || fail "freeze failed"
for _ in $(seq 100); do
	ls "$T/store/incidents/"*.fri >/dev/null 2>&1 && break
	sleep 0.1
done
INC=$(ls "$T/store/incidents/"*.fri 2>/dev/null | head -1)
[ -n "$INC" ] || fail "no incident file"

# check_shares FOLDED WHERE: the two functions' shares of fr-spin's samples
check_shares() {
	local res
	res=$(awk '/^fr-spin;/ { n = $NF; total += n
			if (index($0, ";fr_spin_seventy")) s += n
			else if (index($0, ";fr_spin_thirty")) t += n }
		END { printf "%d %d %d", total, s, t }' "$1")
	read -r total s t <<<"$res"
	[ "$total" -ge 100 ] || fail "$2: only $total samples of fr-spin (about 196 expected for 4 s of CPU at 49 Hz)"
	awk -v tot="$total" -v s="$s" -v t="$t" 'BEGIN {
		if (s + t < 0.9 * tot) exit 1
		a = s / (s + t); exit !(a >= 0.6 && a <= 0.8) }' ||
		fail "$2: fr_spin_seventy $s, fr_spin_thirty $t of $total samples (want 70/30 +- 10 %, 90 % named)"
	ok "$2: fr_spin_seventy $s, fr_spin_thirty $t of $total samples ($(awk -v s="$s" -v t="$t" 'BEGIN { printf "%.0f/%.0f %%", 100 * s / (s + t), 100 * t / (s + t) }'))"
}

"$FRCTL" --store "$T/store" dump --format folded --pid "$P" >"$T/folded" || fail "dump --format folded failed"
check_shares "$T/folded" "exited process, binary deleted"

mkdir -p "$T/elsewhere"
cp -a "$T/store" "$T/elsewhere/store"
cp -a "$T/elsewhere/store" "$T/elsewhere/nosnap"
rm -rf "$T/elsewhere/nosnap/kallsyms"
"$FRCTL" --store "$T/elsewhere/nosnap" dump --format folded --pid "$P" >"$T/folded.copy"
check_shares "$T/folded.copy" "store copied elsewhere, no kernel snapshot"
cp "$INC" "$T/elsewhere/incident.fri"
"$FRCTL" dump --input "$T/elsewhere/incident.fri" --format folded --pid "$P" >"$T/folded.inc" ||
	fail "dump --input of the incident failed"
check_shares "$T/folded.inc" "incident file copied elsewhere"

# report: fr-spin's hottest call path is the folded output's biggest stack
# of it (the same count, process and innermost frames, the outer ones
# elided to fit 100 columns), in fr_spin_seventy; with --pid the share is
# of fr-spin's samples: about 70 %, less the few in the kernel's
# clock_gettime (50 to 85 %)
"$FRCTL" --store "$T/elsewhere/store" report --pid "$P" >"$T/report.txt" || fail "report --pid $P failed"
"$FRCTL" --store "$T/elsewhere/store" dump --format folded --pid "$P" >"$T/folded.pid"
python3 - "$T/report.txt" "$T/folded.pid" <<'PY' >"$T/paths.out" || fail "report's call paths: $(cat "$T/paths.out" "$T/report.txt")"
import re, sys
rep = open(sys.argv[1], encoding="utf-8").read().splitlines()
stacks = sorted(((int(n), k.split(";")) for k, n in (l.rsplit(" ", 1) for l in open(sys.argv[2]))), key=lambda x: -x[0])
total = int(next(m.group(1) for l in rep if (m := re.match(r"CPU \((\d+) samples\)", l))))
h = rep.index("  hottest call paths (share, samples, process: outermost → innermost):")
paths = []
for l in rep[h + 1:]:
    m = re.fullmatch(r"    +(\d+\.\d)%  +(\d+)  ([^:]+): (.+)", l)
    if not m:
        break
    assert len(l) <= 100, f"{len(l)} columns: {l}"
    frames = m.group(4).split(" → ")
    elided = frames[0] == "…"
    paths.append((float(m.group(1)), int(m.group(2)), m.group(3), frames[1:] if elided else frames, elided))
assert 1 <= len(paths) <= 5, f"{len(paths)} paths"
assert [p[1] for p in paths] == sorted((p[1] for p in paths), reverse=True), "not most samples first"
def same(folded, shown):
    # the report cuts a name too long for the line (a C++ template) with "…"
    return len(folded) == len(shown) and all(
        f == s or (s.endswith("…") and len(s) > 1 and f.startswith(s[:-1])) for f, s in zip(folded, shown))
for share, n, comm, frames, elided in paths:
    assert abs(share - 100 * n / total) <= 0.051, f"{share} % is not {n} of {total} samples"
    # a stack the folded output has, with this count
    assert any(c == n and k[0] == comm and (same(k[-len(frames):], frames) if elided else same(k[1:], frames))
               and (len(k) - 1 > len(frames)) == elided for c, k in stacks), f"no folded stack {n} {comm};...;{';'.join(frames)}"
share, n, comm, frames, elided = paths[0]
top = stacks[0]
assert n == top[0] and comm == top[1][0] == "fr-spin" and top[1][-len(frames):] == frames, \
    f"top path {n} {comm}: {frames}, the folded output's biggest stack {top}"
assert frames[-1] == "fr_spin_seventy" and "main" in frames, f"top path {frames}"
assert 50 <= share <= 85, f"top path has {share} % of fr-spin's samples"
print(f"{share} % ({n} of {total} samples) on {' → '.join(frames)}; {len(paths)} paths, each a folded stack with its count")
PY
ok "report's hottest call path: $(cat "$T/paths.out")"

"$FRCTL" --store "$T/elsewhere/store" dump --type sample --format json >"$T/samples.json"
jq -e -s --argjson p "$P" '[.[] | select(.pid == $p)] as $s | [$s[].stack[] | select((.module // "") | endswith("/fr-spin"))] as $f |
	($f | length) > 0 and all($f[]; (.sym | test("^[a-z_]+\\+0x[0-9a-f]+$")) and (.offset | test("^0x[0-9a-f]+$"))) and
	([$s[] | select((.stack[.kernel_frames].module // "") | endswith("/fr-spin"))] | length) >= 0.8 * ($s | length)' \
	"$T/samples.json" >/dev/null ||
	fail "fr-spin's frames are not function+0xoff in /.../fr-spin: $(jq -c --argjson p "$P" 'select(.pid == $p) | .stack[.kernel_frames]' "$T/samples.json" | sort | uniq -c | sort -n | head -3)"
ok "json: fr-spin frames are function+0xoff with module and offset; 80 % of samples have their innermost user frame in it"
# (an interrupt may land on the exit path to user space, outside these two)
jq -e -s --argjson p "$SYS" '[.[] | select(.pid == $p and .kernel_frames > 0)] as $k | ($k | length) > 0 and
	([$k[] | select(.stack[:.kernel_frames] | any(.sym != null and (.sym | test("^(entry_SYSCALL_64|do_syscall_64)\\+")) and
		.module == "[kernel.kallsyms]"))] | length) >= 0.8 * ($k | length)' "$T/samples.json" >/dev/null ||
	fail "syscall loop samples without the named syscall entry path: $(jq -c --argjson p "$SYS" 'select(.pid == $p) | [.stack[:.kernel_frames][].sym]' "$T/samples.json" | head -3)"
ok "kernel frames by name: 80 % of the syscall loop's in-kernel samples pass through entry_SYSCALL_64/do_syscall_64"
# the chunks leave them to the snapshot: without it, unnamed
"$FRCTL" --store "$T/elsewhere/nosnap" dump --type sample --pid "$SYS" --format json >"$T/nosnap.json"
jq -e -s '[.[] | select(.kernel_frames > 0)] as $k | ($k | length) > 0 and
	([$k[] | select(.stack[:.kernel_frames] | all(.sym == null and .module == "[kernel.kallsyms]"))] | length) >= 0.8 * ($k | length)' \
	"$T/nosnap.json" >/dev/null ||
	fail "without the snapshot, the syscall loop's kernel frames are still named by the chunks: $(jq -c '[.stack[:.kernel_frames][].sym]' "$T/nosnap.json" | head -3)"
ok "the chunks do not repeat the snapshot: without it, the syscall loop's kernel frames are unnamed"
# an incident copied alone names them as the store does
"$FRCTL" dump --input "$T/elsewhere/incident.fri" --type sample --pid "$SYS" --format json >"$T/inc.json" ||
	fail "dump --input of the incident failed"
"$FRCTL" --store "$T/elsewhere/store" dump --type sample --pid "$SYS" --format json |
	jq -c --arg a "$(jq -rs '.[0].time' "$T/inc.json")" --arg b "$(jq -rs '.[-1].time' "$T/inc.json")" \
		'select(.time >= $a and .time <= $b)' >"$T/store-sys.json"
cmp -s <(jq -c '[.time, .stack]' "$T/inc.json") <(jq -c '[.time, .stack]' "$T/store-sys.json") ||
	fail "the incident names the syscall loop's frames otherwise than the store: $(diff <(jq -c '[.time, .stack]' "$T/inc.json") <(jq -c '[.time, .stack]' "$T/store-sys.json") | head -4 | cut -c1-600)"
jq -e -s 'length > 0 and ([.[] | select(.kernel_frames > 0 and (.stack[:.kernel_frames] | any(.sym != null)))] | length) > 0' \
	"$T/inc.json" >/dev/null || fail "the incident's kernel frames are unnamed"
ok "an incident copied alone names the syscall loop's frames as the store does ($(jq -s length "$T/inc.json") samples)"
# frames known by address alone are those of processes gone before their
# maps were read (within one drain interval), or sampled before an exec
# (the forked shell: the comm tells).  In the sanitized build the
# workloads run ASan's runtime, which has no frame pointers: a stack
# through it goes on with whatever its frames held (a heap address, seen
# once), so such samples are left out here.  So are samples taken inside
# execve() once the new name is set but before it returns: their user
# frame is the old image's call into execve, whose mappings are gone
# (seen once in the sanitized CI: getppid-loop in load_elf_binary, its
# user frame in bash's libc).  And samples taken in the dynamic loader
# before main (ld.so has no frame pointers either: seen once in the
# sanitized CI, getppid-loop faulting in __tunables_init, its next frames
# a stack address and environment text).
# shown: the workloads' samples, ASan's, ld.so's and exec's left out,
# with an unnamed frame
unnamed='[.[] | select((.pid == $p and .comm == "fr-spin") or (.pid == $q and .comm == "getppid-loop"))
	| select(any(.stack[]?; (.module // "") | test("/libasan[.]so|/ld-linux[^/]*[.]so")) | not)
	| select(any(.stack[]?; (.sym // "") | test("^(bprm_execve|load_elf_binary|begin_new_exec)[+]")) | not)
	| select(any(.stack[]?; .sym == null and .module == null))]'
jq -e -s --argjson p "$P" --argjson q "$SYS" "$unnamed | length == 0" "$T/samples.json" >/dev/null ||
	fail "a frame of fr-spin or the syscall loop with neither a name nor a module: $(jq -c -s --argjson p "$P" --argjson q "$SYS" "$unnamed | .[:2]" "$T/samples.json" | cut -c1-1500)"
ok "every frame of the two workloads has a name or a module"

# (on the copy: the live store grows between two dumps)
"$FRCTL" --store "$T/elsewhere/store" dump --format folded >"$T/folded.all"
nsamples=$("$FRCTL" --store "$T/elsewhere/store" dump --format json | jq -s '[.[] | select(.type == "sample")] | length')
sum=$(awk '{ s += $NF } END { print s + 0 }' "$T/folded.all")
[ "$sum" -eq "$nsamples" ] || fail "folded counts sum to $sum, the window has $nsamples samples"
ok "folded counts sum to the $nsamples samples of the window"

BOOT=$(tr -d - </proc/sys/kernel/random/boot_id)
[ -f "$T/store/kallsyms/$BOOT.zst" ] || fail "no kernel symbol snapshot for boot $BOOT"
zstd -q -dc "$T/store/kallsyms/$BOOT.zst" >"$T/kallsyms.txt" || fail "the kernel symbol snapshot does not decompress"
grep -q " t do_syscall_64$" "$T/kallsyms.txt" || fail "the snapshot lacks do_syscall_64"
ok "kernel symbols of this boot saved in the store ($(stat -c %s "$T/store/kallsyms/$BOOT.zst") bytes)"

# a child forked without an exec has its parent's mappings: named with
# them, without reading its /proc/PID/maps
FORK=$("$HELPERS/fr-spin" 1 fork)
CHILD=$(sed -n 2p <<<"$FORK")
sleep 0.5
"$FRCTL" --store "$T/store" dump --pid "$CHILD" --type sample --format json >"$T/child.json"
jq -e -s 'length >= 20 and ([.[] | select(any(.stack[]; (.sym // "") | test("^fr_spin_(seventy|thirty)[+]")))] | length) >= 0.8 * length' \
	"$T/child.json" >/dev/null ||
	fail "the forked child $CHILD's samples are not named fr_spin_* ($(jq -s length "$T/child.json") samples): $(jq -c '[.stack[] | [.sym, .module]]' "$T/child.json" | head -3 | cut -c1-600); symbolizer: $("$FRCTL" --store "$T/store" status --json | jq -c .sampler.symbols)"
ok "a forked child's samples are named ($(jq -s length "$T/child.json") samples)"
"$FRCTL" --store "$T/store" status --json >"$T/status.json"
jq -e '.sampler.symbols.maps_inherited >= 1' "$T/status.json" >/dev/null ||
	fail "no forked child was given its parent's mappings: $(jq -c .sampler.symbols "$T/status.json")"
# the files' symbol tables are counted against the cache's bound (24 MiB):
# a cache that counts nothing is never trimmed
jq -e '.sampler.symbols.user_named > 0 and .sampler.symbols.kernel_named > 0 and .sampler.symbols.kernel_symbols > 10000
	and .sampler.symbols.cached_files > 0 and .sampler.symbols.cache_bytes > 0' \
	"$T/status.json" >/dev/null || fail "status: $(jq -c .sampler "$T/status.json")"
ok "status: $(jq -c .sampler.symbols "$T/status.json")"
stop_daemon
