# Shared by the kernel tests: a private flightrecd on a temporary store,
# and assertions.  Sourced; expects BUILD (the meson build dir).
set -euo pipefail

FLIGHTRECD="$BUILD/daemon/flightrecd"
FRCTL="$BUILD/ctl/frctl"
# frctl would ask the debuginfod servers of the caller's environment for
# the frames a test's daemon left unnamed: no test depends on the network
unset DEBUGINFOD_URLS
T=$(mktemp -d /tmp/fr-test-XXXXXX)
DPID=

# end_daemon: stops the test's daemon if it still runs, whatever its status
end_daemon() {
	if [ -n "$DPID" ] && kill -0 "$DPID" 2>/dev/null; then
		kill -TERM "$DPID"
		# (a test that stopped it, SIGSTOP, and failed before it went on)
		kill -CONT "$DPID" 2>/dev/null || true
		wait "$DPID" 2>/dev/null || true
	fi
	DPID=
}
# groups the test made (make_group), removed at exit
TEST_GROUPS=()
# processes the test started in the background (PIDS="$PIDS $!"), ended
# at exit, by their pids
PIDS=
# the cgroup v1 blkio group the test made (throttle), removed at exit
BLKIO=
cleanup() {
	local g p
	for p in $PIDS; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true; done
	end_daemon
	for g in "${TEST_GROUPS[@]}"; do
		groupdel "$g" 2>/dev/null || true
	done
	[ -n "$BLKIO" ] && [ -d "$BLKIO" ] && rmdir "$BLKIO" 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

# as_nobody CMD [ARG...]: CMD as the unprivileged user nobody, no groups
NOBODY=65534
as_nobody() { setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups "$@"; }

# make_group NAME: a group of the test's own, removed at exit
make_group() {
	groupadd "$1" || fail "cannot create group $1"
	TEST_GROUPS+=("$1")
}

# throttle FILE read|write BPS: a slow disk for some processes only: the
# blkio group $BLKIO (cgroup v1) limits the reads or writes of the whole
# disk FILE is on (throttles are set on disks, not partitions) to BPS
# bytes a second for the processes written to $BLKIO/cgroup.procs
throttle() {
	local dev sys
	[ -d /sys/fs/cgroup/blkio ] || fail "no cgroup v1 blkio controller here"
	dev=$(stat -c %d "$1")
	dev=$((dev >> 8)):$((dev & 255))
	sys=$(readlink -f "/sys/dev/block/$dev")
	[ -e "$sys/partition" ] && dev=$(cat "$(dirname "$sys")/dev")
	BLKIO=/sys/fs/cgroup/blkio/fr-test-$$
	mkdir "$BLKIO"
	echo "$dev $3" >"$BLKIO/blkio.throttle.$2_bps_device" || fail "cannot throttle the ${2}s of $dev"
}

fail() {
	echo "FAIL: $*" >&2
	[ -f "$T/daemon.log" ] && { echo "--- daemon log:" >&2; tail -20 "$T/daemon.log" >&2; }
	if [ -d "$T/store" ]; then
		echo "--- status:" >&2
		"$FRCTL" --store "$T/store" status --json >&2 || true
		echo "--- syscall records:" >&2
		"$FRCTL" --store "$T/store" dump --type syscall >&2 || true
		echo "--- last records:" >&2
		"$FRCTL" --store "$T/store" dump | grep -v ' frctl\[' | tail -25 >&2 || true
	fi
	# again last: a log cut to its tail (meson's, CI's) still says why
	echo "FAIL (as above): $*" >&2
	exit 1
}

# parser_shed: stacks the daemon did not give its parser, counted (past
# its time budget, or no parser running): each is its leaf and
# [unwind failed], and a check may leave at most this many out
parser_shed() {
	"$FRCTL" --store "$T/store" status --json | jq '.sampler.parser | (.over_budget // 0) + (.skipped // 0)'
}

ok() {
	echo "ok: $*"
}

# start_daemon CONFIG: starts flightrecd on $T/store, waits until it answers.
start_daemon() {
	"$FLIGHTRECD" --config "$1" --store "$T/store" >>"$T/daemon.log" 2>&1 &
	DPID=$!
	for _ in $(seq 100); do
		if "$FRCTL" --config "$1" --store "$T/store" status >/dev/null 2>&1; then
			return 0
		fi
		kill -0 "$DPID" 2>/dev/null || fail "flightrecd exited during start"
		sleep 0.1
	done
	fail "flightrecd did not answer status within 10 s"
}

stop_daemon() {
	kill -TERM "$DPID"
	local rc=0
	wait "$DPID" || rc=$?
	DPID=
	[ "$rc" -eq 0 ] || fail "flightrecd exited with $rc on SIGTERM"
}

# a jq definition: `ns` turns a record's time (RFC 3339, 9 decimals) into
# ns since the epoch (a double: ~256 ns steps)
JQ_NS='def ns: (.[0:19] + "Z" | fromdate) * 1e9 + (.[20:29] | tonumber);'

# has_record FILTER [SECONDS]: whether a record matching the jq FILTER is
# in the store within SECONDS (20); the last dump's exit status in $WAIT_RC
# (not rc: a test's own variable),
# its records in $T/wait.json
has_record() {
	local deadline=$((SECONDS + ${2:-20}))
	# the last 10 minutes, not the whole store: on a busy machine a test's
	# store fills with everyone's records, and each look must stay cheap
	while [ "$SECONDS" -lt "$deadline" ]; do
		WAIT_RC=0
		"$FRCTL" --store "$T/store" dump --last 10m --format json 2>"$T/wait.err" >"$T/wait.json" || WAIT_RC=$?
		if [ "$WAIT_RC" -eq 0 ] && jq -n -e "any(inputs; $1)" <"$T/wait.json" >/dev/null 2>>"$T/wait.err"; then
			return 0
		fi
		sleep 0.1
	done
	return 1
}

# wait_for_record JQ_FILTER: polls dump until a record matches (chunks are
# closed within the sync interval), or fails the test.
wait_for_record() {
	has_record "$1" && return 0
	fail "no record matching $1 within 20 s (last dump: exit $WAIT_RC, $(head -c 300 "$T/wait.err"))"
}

# split_debug BIN BINDIR DEBUGDIR: BINDIR/$(basename BIN) is BIN stripped of
# everything (--strip-all, as distributions ship programs: no .symtab
# either), its debug information split off into
# DEBUGDIR/.build-id/xx/rest.debug as a -dbgsym package installs it.  Sets
# BID (the build id) and DBG (the debug file's path).
split_debug() {
	local bin=$1 out
	out="$2/$(basename "$1")"
	mkdir -p "$2"
	BID=$(readelf -n "$bin" | awk '/Build ID:/ { print $3 }')
	[[ "$BID" =~ ^[0-9a-f]{40}$ ]] || fail "$bin has no GNU build id (readelf -n: '$BID')"
	DBG="$3/.build-id/${BID:0:2}/${BID:2}.debug"
	mkdir -p "$(dirname "$DBG")"
	objcopy --only-keep-debug "$bin" "$DBG" || fail "objcopy --only-keep-debug $bin failed"
	strip --strip-all -o "$out" "$bin" || fail "strip $bin failed"
	# (read whole, not piped into grep -q: under pipefail, a reader cut
	# short by grep's early exit fails the pipeline)
	local sections
	sections=$(readelf -SW "$out")
	grep -qE ' \.(symtab|debug_info) ' <<<"$sections" && fail "the stripped $out still has a .symtab or .debug_info"
	return 0
}

# task_work_here: whether this kernel lets the sched_switch tracepoint
# schedule BPF task work, which copies an off-CPU wait's user stack (and
# walks its Python frames) from the thread itself.  A kernel with the
# kfunc may still refuse it there (a 6.18 build seen here does), so the
# kernel is asked directly: the daemon's probe object (taskwork.bpf.o)
# loaded by bpftool on a private bpffs, removed after.  Sets TW_REASON to
# the verifier's line when it refuses.  Where it does, the daemon falls
# back to the innermost user frame and says so (test-offcpu-stacks.sh).
task_work_here() {
	local rc
	mkdir "$T/bpffs" && mount -t bpf bpf "$T/bpffs" || fail "cannot mount a bpffs on $T/bpffs"
	bpftool prog load "$BUILD/bpf/taskwork.bpf.o" "$T/bpffs/probe" >"$T/probe.log" 2>&1
	rc=$?
	rm -f "$T/bpffs/probe"
	umount "$T/bpffs" && rmdir "$T/bpffs"
	TW_REASON=$(grep -m1 -i 'sleepable\|invalid\|not allowed\|unknown\|not supported' "$T/probe.log")
	return $rc
}

# cutfs_mount CUTFS MNT: fr-cutfs (tests/helpers/fr-cutfs.c) over $T/disk
# on MNT, its faults read from $T/faults (cutfs_faults sets them), FSPID
# its pid.  At exit cutfs_teardown ends the test's load ($PIDS, and
# $LOADPIDS if set) and its daemon before the file system they use, then
# does the rest of cleanup.
cutfs_mount() {
	CUTFS_MNT=$2
	mkdir -p "$T/disk" "$CUTFS_MNT"
	: >"$T/faults"
	trap cutfs_teardown EXIT
	"$1" --faults "$T/faults" "$T/disk" "$CUTFS_MNT" 2>>"$T/cutfs.log" &
	FSPID=$!
	for _ in $(seq 100); do mountpoint -q "$CUTFS_MNT" && return 0; sleep 0.05; done
	fail "fr-cutfs did not mount"
}
cutfs_teardown() {
	[ -n "${LOADPIDS:-}" ] && { kill $LOADPIDS 2>/dev/null || true; wait $LOADPIDS 2>/dev/null || true; }
	end_daemon
	[ -n "${FSPID:-}" ] && { kill -USR1 "$FSPID" 2>/dev/null || true; wait "$FSPID" 2>/dev/null || true; }
	umount -l "$CUTFS_MNT" 2>/dev/null || true
	cleanup
}
# cutfs_faults [LINE...]: the faults fr-cutfs applies from now on (none
# without a LINE)
cutfs_faults() {
	if [ $# -gt 0 ]; then printf '%s\n' "$@" >"$T/faults"; else : >"$T/faults"; fi
	kill -HUP "$FSPID"
}

# segments_du: the bytes the store's segment files take on disk
segments_du() { du -c --block-size=1 "$T/store/segments/"*.frs | tail -1 | cut -f1; }
# storm_over BOUND STORM: exec storms (fr-exec-storm) until the daemon has
# written 5 x BOUND bytes into its store (40 rounds at most), du of its
# segments looked at after each; then an exec whose argv has MARKER,
# waited for in the store, and the daemon stopped.  Sets WRITTEN, USED
# (du at the end) and MAX_DU (the most du was, the end included).
storm_over() {
	MAX_DU=0
	for _ in $(seq 40); do
		"$2" 1000
		USED=$(segments_du)
		[ "$USED" -gt "$MAX_DU" ] && MAX_DU=$USED
		WRITTEN=$("$FRCTL" --store "$T/store" status --json | jq .store.bytes_written)
		[ "$WRITTEN" -ge $((5 * $1)) ] && break
	done
	[ "$WRITTEN" -ge $((5 * $1)) ] || fail "only $WRITTEN bytes written after 40 storms"
	MARKER="newest-$$-$RANDOM"
	/bin/true "$MARKER"
	wait_for_record ".type == \"exec\" and (.argv | index(\"$MARKER\"))"
	stop_daemon
	USED=$(segments_du)
	[ "$USED" -gt "$MAX_DU" ] && MAX_DU=$USED
	return 0
}
