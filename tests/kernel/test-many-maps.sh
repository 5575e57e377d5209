#!/bin/bash
# A user who maps a file 20,000 times (issue 42): the daemon takes at most
# 4,096 mappings of files from a process's /proc/PID/maps (the
# symbolizer's executable ones, the unwinder's for libdwfl, which makes a
# module of each; FR_MAPS_FILES_MAX), and counts the reads it cut short
# (symbols.maps_capped, unwind.maps_capped); status keeps answering, and
# the process's own frames are still named (the program's mappings come
# first in its maps, below the mmap area).  The daemon's CPU over the run
# is printed, not asserted (timing belongs to tests/bench).
# Usage: test-many-maps.sh BUILD_DIR
BUILD=$1
. "$(dirname "$0")/lib.sh"

MAPPER=
cleanup_maps() {
	[ -z "$MAPPER" ] || kill -KILL "$MAPPER" 2>/dev/null || true
	[ ! -f "$T/out/maps" ] || kill -KILL "$(cut -d' ' -f1 "$T/out/maps")" 2>/dev/null || true
	cleanup
}
trap cleanup_maps EXIT

cat >"$T/fr.conf" <<CONF
store = { size = "16M"; segments = 4; sync_interval = "200ms"; };
sources = { sample = { hz = 97; }; };
CONF
chmod 0755 "$T"
# 20,000 executable one-page mappings of one file of its own, all of its
# first page (adjacent ones of consecutive offsets would merge),
# then 8 s on the CPU.  Made before the daemon starts: it reads a
# process's maps at its first sample, which would otherwise come while
# the mappings are being made
cat >"$T/mapper.py" <<'PY'
import ctypes, mmap, os, sys, time
path = os.path.join(sys.argv[1], "pages")
with open(path, "wb") as f:
    f.write(b"\xc3" * 4096)
fd = os.open(path, os.O_RDONLY)
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
for i in range(20000):
    # (mmap.mmap would keep a descriptor for each)
    if libc.mmap(None, 4096, mmap.PROT_READ | mmap.PROT_EXEC, mmap.MAP_PRIVATE, fd, 0) in (None, 2**64 - 1):
        sys.exit("mmap: %s" % os.strerror(ctypes.get_errno()))
with open(os.path.join(sys.argv[1], "maps"), "w") as f:
    f.write("%d %d\n" % (os.getpid(), sum(1 for _ in open("/proc/self/maps"))))
end = time.time() + 8
n = 0
while time.time() < end:
    n += 1
PY
mkdir -m 0777 "$T/out"
cpu() { awk '{ print $14 + $15 }' "/proc/$DPID/stat"; }
as_nobody /usr/bin/python3 "$T/mapper.py" "$T/out" &
MAPPER=$!
for _ in $(seq 100); do
	[ -s "$T/out/maps" ] && break
	sleep 0.1
done
[ -s "$T/out/maps" ] || fail "the mapper did not map its ranges within 10 s"
start_daemon "$T/fr.conf"
c0=$(cpu)
t0=$(date +%s%N)
for _ in $(seq 12); do
	sleep 0.5
	timeout 1 "$FRCTL" --store "$T/store" status --json >"$T/st.json" || fail "status did not answer within 1 s"
done
wait "$MAPPER" || fail "the mapper failed"
c1=$(cpu)
t1=$(date +%s%N)
MAPPER=
read -r MAPPER_PID n <"$T/out/maps"
[ "$n" -gt 20000 ] || fail "the mapper had only $n mappings"
"$FRCTL" --store "$T/store" status --json >"$T/st.json"
jq -e '.sampler.symbols.maps_capped > 0 and .sampler.unwind.maps_capped > 0' "$T/st.json" >/dev/null ||
	fail "the reads of $n mappings were not capped: $(jq -c '{s: .sampler.symbols | {maps_read, maps_capped}, u: .sampler.unwind | {maps_read, maps_capped}}' "$T/st.json")"
wait_for_record ".type == \"sample\" and .pid == $MAPPER_PID and any(.stack[]; .module // \"\" | test(\"python3|libpython\"))"
hz=$(getconf CLK_TCK)
share=$(echo "scale=1; 100 * ($c1 - $c0) / $hz / (($t1 - $t0) / 1000000000)" | bc)
ok "nobody's $n mappings: reads capped, python3's frames still named (symbols $(jq .sampler.symbols.maps_capped "$T/st.json"), unwind $(jq .sampler.unwind.maps_capped "$T/st.json")), status answered throughout, daemon CPU ${share} % over the run"
stop_daemon
