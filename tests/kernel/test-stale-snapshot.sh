#!/bin/bash
# A kernel symbol snapshot of this boot that no longer matches the kernel
# (saved by an earlier run, before a module or BPF program came or went)
# must not name frames wrongly: chunks leave to the snapshot only the
# functions it names the same.  The store starts with this boot's
# snapshot, made from /proc/kallsyms with do_syscall_64 renamed; then, on
# a syscall loop's samples:
#   - the daemon keeps that snapshot (once per boot) and says it differs,
#   - the loop's kernel frames read do_syscall_64, never the stale name,
#     from the store and from a copy of it without its snapshots (the
#     chunks describe that function),
#   - other kernel functions are still left to the snapshot (status:
#     kernel_by_snapshot).
# Then a snapshot that differs from the kernel in BPF programs' symbols
# only (as every restart within a boot finds: the daemon's own programs
# moved): the daemon takes it for the same (it does not log that it
# differs, and holds one table, not two).
BUILD=$1
. "$(dirname "$0")/lib.sh"

BOOT=$(tr -d - </proc/sys/kernel/random/boot_id)
mkdir -p "$T/store/kallsyms"
# the snapshot format: function symbols sorted by address, a tab before
# [module] (flightrec-store(5), KERNEL SYMBOL SNAPSHOTS)
awk '$2 ~ /^[tTwW]$/ {
	name = $3 == "do_syscall_64" ? "fr_stale_do_syscall_64" : $3
	if (NF >= 4) printf "%016s t %s\t%s\n", $1, name, $4; else printf "%016s t %s\n", $1, name }' /proc/kallsyms |
	sort -s -k1,1 >"$T/stale.txt"
grep -q " t fr_stale_do_syscall_64$" "$T/stale.txt" || fail "/proc/kallsyms has no do_syscall_64 to rename"
zstd -q -3 "$T/stale.txt" -o "$T/store/kallsyms/$BOOT.zst"
sum0=$(sha256sum <"$T/store/kallsyms/$BOOT.zst")

cat >"$T/fr.conf" <<CONF
store = { size = "16M"; segments = 4; sync_interval = "200ms"; };
CONF
start_daemon "$T/fr.conf"
"$BUILD/tests/bench/getppid-loop" 3000000 >/dev/null &
SYS=$!
wait $SYS
sleep 0.5
"$FRCTL" --store "$T/store" status --json >"$T/status.json"
end_daemon

[ "$(sha256sum <"$T/store/kallsyms/$BOOT.zst")" = "$sum0" ] || fail "the snapshot of this boot was written again"
ok "the snapshot saved earlier in this boot is kept"
DIFFERS="kernel symbols in the store differ from the kernel's now"
grep -q "$DIFFERS" "$T/daemon.log" || fail "the daemon did not say the snapshot differs: $(head -c 600 "$T/daemon.log")"
ok "the daemon said the snapshot differs"

# named_frames STORE OUT: the loop's samples with kernel frames, their names
named_frames() {
	"$FRCTL" --store "$1" dump --type sample --pid "$SYS" --format json |
		jq -c 'select(.kernel_frames > 0) | [.stack[:.kernel_frames][].sym // "?"]' >"$2"
}
cp -a "$T/store" "$T/nosnap"
rm -rf "$T/nosnap/kallsyms"
for s in store nosnap; do
	named_frames "$T/$s" "$T/$s.frames"
	n=$(wc -l <"$T/$s.frames")
	[ "$n" -ge 5 ] || fail "$s: only $n samples of the syscall loop with kernel frames"
	! grep -q fr_stale "$T/$s.frames" || fail "$s: a frame named from the stale snapshot: $(grep -m1 fr_stale "$T/$s.frames")"
	k=$(grep -c '"do_syscall_64+' "$T/$s.frames" || true)
	[ "$k" -ge $((n * 8 / 10)) ] || fail "$s: do_syscall_64 in $k of $n in-kernel samples: $(head -3 "$T/$s.frames")"
	ok "$s: do_syscall_64 in $k of $n in-kernel samples, never the stale name"
done
jq -e '.sampler.symbols.kernel_by_snapshot > 0 and .sampler.symbols.kernel_by_snapshot < .sampler.symbols.kernel_named' \
	"$T/status.json" >/dev/null || fail "status: $(jq -c .sampler.symbols "$T/status.json")"
ok "the other functions are left to the snapshot: $(jq -c '.sampler.symbols | {kernel_named, kernel_by_snapshot}' "$T/status.json")"

# the same functions, other BPF programs: not a stale snapshot
rm -rf "$T/store"
mkdir -p "$T/store/kallsyms"
awk '$2 ~ /^[tTwW]$/ && $4 != "[bpf]" {
	if (NF >= 4) printf "%016s t %s\t%s\n", $1, $3, $4; else printf "%016s t %s\n", $1, $3 }
	END { printf "ffffffffc0fff000 t bpf_prog_0123456789abcdef_gone\t[bpf]\n" }' /proc/kallsyms |
	sort -s -k1,1 >"$T/bpf.txt"
zstd -q -3 "$T/bpf.txt" -o "$T/store/kallsyms/$BOOT.zst"
: >"$T/daemon.log"
start_daemon "$T/fr.conf"
"$FRCTL" --store "$T/store" status --json >/dev/null || fail "no status"
end_daemon
! grep -q "$DIFFERS" "$T/daemon.log" || fail "a snapshot differing in BPF programs only was taken for stale: $(grep "$DIFFERS" "$T/daemon.log")"
ok "a snapshot differing in BPF programs' symbols only is the same"
