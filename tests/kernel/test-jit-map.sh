#!/bin/bash
# JIT maps cannot carry root's files into the store (issue 42): in a user
# namespace, nobody bind-mounts a root-only file over /tmp/perf-PID.map
# (a bind mount is not a symbolic link) and runs JIT-like code (code in
# an anonymous mapping at a known address, tests/helpers/fr-fifo-swap.c
# --jit).  The daemon
# must not read it: the map file's owner must be the process's uid, and
# it must be on the process's /tmp mount.  Its lines never name a frame,
# the lines counter does not move, the refusal is counted.  A map of
# nobody's own, in /tmp, still names nobody's frames.
# Usage: test-jit-map.sh BUILD_DIR HELPERS_DIR
BUILD=$1
HELPERS=$2
. "$(dirname "$0")/lib.sh"

JPIDS=()
cleanup_jit() {
	for p in "${JPIDS[@]}"; do rm -f "/tmp/perf-$p.map"; done
	cleanup
}
trap cleanup_jit EXIT
chmod 0755 "$T"
cp "$HELPERS/fr-fifo-swap" "$T/jit"
chmod 0755 "$T/jit"
# root's file, in perf map syntax so that, read, it names every frame
printf '10000000000 2000 root-only-secret-line\n' >"$T/secret"
chmod 0600 "$T/secret"
cat >"$T/fr.conf" <<CONF
store = { size = "16M"; segments = 4; sync_interval = "200ms"; };
sources = { sample = { hz = 97; }; };
CONF
start_daemon "$T/fr.conf"
perf_maps() { "$FRCTL" --store "$T/store" status --json | jq -c '.sampler.perf_maps | {files, lines, refused}'; }

# 1. nobody's own map, in /tmp: its frames are named from it
as_nobody sh -c 'echo $$; printf "10000000000 2000 nobody-own-jit-name\n" >/tmp/perf-$$.map; exec "$1" --jit 2' sh "$T/jit" \
	>"$T/own.out" || fail "the JIT helper failed as nobody"
P=$(head -1 "$T/own.out")
JPIDS+=("$P")
wait_for_record ".type == \"sample\" and .pid == $P and any(.stack[]; .sym // \"\" | startswith(\"nobody-own-jit-name\"))"
ok "nobody's own /tmp/perf-$P.map names its frames: $(perf_maps)"
B=$(perf_maps)

# 2. a user namespace's bind mount of root's file over the map
# bind_run FILE SECONDS NAME: nobody, in a user and mount namespace of
# its own, binds FILE over its /tmp/perf-PID.map and runs the JIT helper
# for SECONDS; sets P to its pid once the daemon has sampled it
bind_run() {
	as_nobody unshare --user --map-root-user --mount sh -c \
		'echo $$; : >/tmp/perf-$$.map && mount --bind "$1" /tmp/perf-$$.map && exec "$2" --jit "$3"' sh "$1" "$T/jit" "$2" \
		>"$T/$3.out" 2>"$T/$3.err" || fail "the user namespace run $3 failed: $(cat "$T/$3.err")"
	P=$(head -1 "$T/$3.out")
	JPIDS+=("$P")
	wait_for_record ".type == \"sample\" and .pid == $P"
	sleep 0.5
}
bind_run "$T/secret" 3 ns
P2=$P
"$FRCTL" --store "$T/store" dump --format json >"$T/dump.json"
n=$(grep -c root-only-secret-line "$T/dump.json" || true)
[ "$n" -eq 0 ] || fail "root's file named $n records: $(grep -m1 root-only-secret-line "$T/dump.json" | head -c 300)"
n=$(jq -s --argjson p "$P2" '[.[] | select(.type == "sample" and .pid == $p)] | length' "$T/dump.json")
[ "$n" -gt 0 ] || fail "no samples of the attacker ($P2)"
A=$(perf_maps)
[ "$(jq .lines <<<"$A")" -eq "$(jq .lines <<<"$B")" ] || fail "lines were taken from the bind-mounted file: $B before, $A after"
[ "$(jq .refused <<<"$A")" -gt "$(jq .refused <<<"$B")" ] || fail "the bind-mounted map was not refused: $B before, $A after"
ok "a bind mount of root's file over /tmp/perf-$P2.map: not read, $n samples, no frame named from it: $B before, $A after"

# 3. the mount check alone: a bind mount of a map of nobody's own (the
# owner is right) over the path is still another mount, refused
printf '10000000000 2000 nobody-bound-jit-name\n' >"$T/own.map"
chown 65534:65534 "$T/own.map"
bind_run "$T/own.map" 2 ns2
P3=$P
"$FRCTL" --store "$T/store" dump --format json >"$T/dump.json"
n=$(grep -c nobody-bound-jit-name "$T/dump.json" || true)
[ "$n" -eq 0 ] || fail "a bind-mounted map (not on the process's /tmp mount) named $n records"
C=$(perf_maps)
[ "$(jq .refused <<<"$C")" -gt "$(jq .refused <<<"$A")" ] || fail "the bind-mounted own map was not refused: $A before, $C after"
ok "a bind mount of nobody's own map over /tmp/perf-$P3.map: refused (another mount): $C"
stop_daemon
echo "jit-map: all checks passed"
