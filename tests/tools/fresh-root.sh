#!/bin/bash
# scripts/check in a fresh Debian 12 root, as a new machine or a CI runner
# with nothing but git would run it: proves that scripts/deps.sh installs
# every package the build and the tests need.
#
# The root is debootstrap'ed (variant minbase unless --variant says
# otherwise) with git and nothing else.  Apt needs nothing more: minbase
# has apt, gpgv and debian-archive-keyring, and the mirror (the first
# Debian one in the host's apt sources) is plain http; for an https mirror
# ca-certificates is added.  The root is bound onto itself, and the kernel
# tests' file systems are mounted inside it: proc, sysfs, the host's
# cgroup layout (the tests use cgroup2 and the v1 memory controller at
# /sys/fs/cgroup/memory), bpf, tracefs, debugfs, /dev with a devpts and a
# /dev/shm of its own, and tmpfs on /run and /tmp (--disk-tmp: /tmp stays
# the root's own directory).  The repository is cloned inside and
# scripts/check runs there as root with a bare environment (HOME and PATH).
#
# The root is entered with pivot_root in a mount namespace of its own, not
# with chroot(2): test-systemd boots "/" with systemd-nspawn, which is then
# this root, and nspawn and nsenter behave as on a machine booted from it.
# --chroot enters it with chroot(2) instead.
#
# Everything is mounted in a private mount namespace (nothing shows on the
# host, nothing propagates back) and unmounted on exit, whatever happens;
# processes left running in the root are killed first.  The host's /tmp,
# /run and cgroups are never used: only the root's mounts are (the tests
# make and remove cgroups of their own, as they do on the host).
#
# Usage: tests/tools/fresh-root.sh [OPTION...] [-- MESON_TEST_ARG...]
#   -d, --dir DIR       the root (default /var/tmp/flightrec-fresh-root)
#   -r, --repo PATH     the repository to clone (default: this one)
#   -c, --commit REV    what to check out (default HEAD of --repo)
#   -k, --keep          reuse DIR as it is when it holds a root made here
#                       (no debootstrap: packages installed by an earlier
#                       run stay); without it DIR is made afresh
#   --keep-build        with --keep: update the earlier clone instead of
#                       cloning again, so its build directories are reused
#   --copy PATH         after the checkout, copy PATH (relative to the
#                       repository) from --repo's work tree into the clone:
#                       to try an uncommitted change (repeatable)
#   -e, --env NAME=VAL  set NAME in the root's environment (repeatable);
#                       it is otherwise only HOME and PATH (no TERM, no
#                       locale), as a CI runner's may be
#   --disk-tmp          no tmpfs on /tmp
#   --chroot            enter the root with chroot(2), not pivot_root
#   --variant V         debootstrap variant: minbase (default) or
#                       buildd; "default" for debootstrap's own
#   --remove            remove the root after the run (CI: each run is
#                       made afresh anyway; the log stays)
#   -l, --log FILE      (default DIR.log)
#   --run CMD           instead of scripts/check: bash -c CMD in the clone
#   -- ARGS             instead of scripts/check: the dependencies, the
#                       build, then `meson test -C build-check ARGS`
#                       (test names, --suite kernel, ...)
# Examples:
#   tests/tools/fresh-root.sh                      # the whole check, afresh
#   tests/tools/fresh-root.sh -k --keep-build --copy scripts/deps.sh -- sources privileges
set -euo pipefail

ROOT=/var/tmp/flightrec-fresh-root
REPO=$(cd "$(dirname "$0")/../.." && pwd)
COMMIT=HEAD
KEEP=
KEEP_BUILD=
REMOVE=
DISK_TMP=
CHROOT=
VARIANT=minbase
LOG=
RUN=
TESTS=()
COPY=()
ENVS=()
SUITE=bookworm
# the clone, inside the root
SRC=/root/flightrec
# marks a root this script made: only such a directory is ever deleted
MARK=.fr-fresh-root

die() {
	echo "fresh-root: $*" >&2
	exit 1
}

INNER=
while [ $# -gt 0 ]; do
	case "$1" in
	-d | --dir) ROOT=${2:?}; shift ;;
	-r | --repo) REPO=${2:?}; shift ;;
	-c | --commit) COMMIT=${2:?}; shift ;;
	-k | --keep) KEEP=1 ;;
	--keep-build) KEEP_BUILD=1 ;;
	--remove) REMOVE=1 ;;
	--copy) COPY+=("${2:?}"); shift ;;
	-e | --env) [[ "${2:?}" == [A-Za-z_]*=* ]] || die "--env $2: NAME=VALUE"; ENVS+=("$2"); shift ;;
	--disk-tmp) DISK_TMP=1 ;;
	--chroot) CHROOT=1 ;;
	--variant) VARIANT=${2:?}; shift ;;
	-l | --log) LOG=${2:?}; shift ;;
	--run) RUN=${2:?}; shift ;;
	--inner) INNER=1 ;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	--) shift; TESTS=("$@"); break ;;
	*) die "unknown option $1 (see --help)" ;;
	esac
	shift
done
[ "$(id -u)" -eq 0 ] || die "run as root (debootstrap, mounts, pivot_root)"
ROOT=$(realpath -m "$ROOT")
case "$ROOT" in
/ | /var/tmp | /tmp | /root | /home | /work*) die "refusing $ROOT as the root: use a directory of its own" ;;
esac
LOG=${LOG:-$ROOT.log}

# --- inside the private mount namespace: mount, run, unmount
if [ -n "$INNER" ]; then
	MOUNTS=()
	# mnt [MOUNT ARGS...] TARGET: mounts, and remembers TARGET for the end
	mnt() {
		local target=${*: -1}
		mkdir -p "$target"
		mount "$@"
		MOUNTS+=("$target")
	}
	# the pids of the processes whose root is this one (left over by a
	# test), whatever mount namespace they are in
	ROOT_ID=$(stat -c %d:%i "$ROOT")
	# shellcheck disable=SC2317 # (these three are called by the EXIT trap)
	in_this_root() {
		local p
		for p in /proc/[0-9]*; do
			[ "$(stat -L -c %d:%i "$p/root" 2>/dev/null)" = "$ROOT_ID" ] && echo "${p#/proc/}"
		done
		return 0
	}
	# holders DIR: the processes with a file under DIR open or mapped
	# shellcheck disable=SC2317
	holders() {
		local p
		for p in /proc/[0-9]*; do
			{ grep -q -F " $1/" "$p/maps" || find "$p/fd" "$p/cwd" -lname "$1/*" | grep -q .; } 2>/dev/null &&
				echo -n "${p#/proc/} ($(cat "$p/comm" 2>/dev/null)) "
		done
		return 0
	}
	# shellcheck disable=SC2317
	teardown() {
		local pids i m
		mapfile -t pids < <(in_this_root)
		if [ ${#pids[@]} -gt 0 ]; then
			echo "fresh-root: killing processes left in the root: ${pids[*]}" >&2
			kill -TERM "${pids[@]}" 2>/dev/null || true
			sleep 2
			mapfile -t pids < <(in_this_root)
			[ ${#pids[@]} -eq 0 ] || kill -KILL "${pids[@]}" 2>/dev/null || true
			sleep 0.5
		fi
		for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
			m=${MOUNTS[i]}
			mountpoint -q "$m" || continue
			# a process outside (a flightrecd of the host's naming the
			# binaries run in here) may hold a file of the root a while
			for _ in $(seq 20); do
				umount -R "$m" 2>/dev/null && continue 2
				sleep 0.5
			done
			echo "fresh-root: $m still busy after 10 s (open or mapped by: $(holders "$m")): lazy unmount" >&2
			umount -R -l "$m" || echo "fresh-root: could not unmount $m" >&2
		done
	}
	trap teardown EXIT
	trap 'exit 143' TERM INT HUP

	mnt --bind "$ROOT" "$ROOT"
	mnt -t proc proc "$ROOT/proc"
	mnt -t sysfs sysfs "$ROOT/sys"
	# the host's cgroup layout, as the tests see it there: a cgroup2 or a
	# tmpfs of hierarchies (and their symlinks) at /sys/fs/cgroup
	case "$(findmnt -n -o FSTYPE /sys/fs/cgroup || true)" in
	cgroup2) mnt --bind /sys/fs/cgroup "$ROOT/sys/fs/cgroup" ;;
	tmpfs)
		mnt -t tmpfs -o mode=0755,nosuid,nodev,noexec tmpfs "$ROOT/sys/fs/cgroup"
		while read -r target; do
			[ "$target" = /sys/fs/cgroup ] && continue
			mnt --bind "$target" "$ROOT$target"
		done < <(findmnt -n -l -R -o TARGET /sys/fs/cgroup)
		for l in /sys/fs/cgroup/*; do
			[ -L "$l" ] && cp -P "$l" "$ROOT$l"
		done
		;;
	*) die "no cgroup file system at /sys/fs/cgroup on the host" ;;
	esac
	mnt -t bpf bpf "$ROOT/sys/fs/bpf"
	mnt -t tracefs tracefs "$ROOT/sys/kernel/tracing"
	mnt -t debugfs debugfs "$ROOT/sys/kernel/debug"
	# devtmpfs (not recursive: the host's pts and shm stay out)
	mnt --bind /dev "$ROOT/dev"
	mnt -t devpts -o newinstance,ptmxmode=0666,mode=0620,gid=5 devpts "$ROOT/dev/pts"
	mnt -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$ROOT/dev/shm"
	mnt -t tmpfs -o mode=0755,nosuid,nodev tmpfs "$ROOT/run"
	mkdir -m 1777 "$ROOT/run/lock"
	if [ -z "$DISK_TMP" ]; then
		mnt -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$ROOT/tmp"
	else
		find "$ROOT/tmp" -mindepth 1 -delete
	fi
	mnt --bind -o ro "$REPO" "$ROOT/run/fr-origin"
	cp -L /etc/resolv.conf "$ROOT/etc/resolv.conf"

	# in_root CMD [ARG...]: bash -c CMD in the root, with a bare
	# environment.  pivot_root in a mount namespace of its own (which
	# needs the root to be a mount point: the bind above), the old root
	# detached there; or chroot(2).
	in_root() {
		local enter=(chroot "$ROOT")
		# shellcheck disable=SC2016 # the inner shell's $1
		[ -n "$CHROOT" ] || enter=(unshare -m --propagation private sh -c \
			'cd "$1" && pivot_root . . && umount -l . && cd / && shift && exec "$@"' sh "$ROOT")
		env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "${ENVS[@]}" \
			"${enter[@]}" /bin/bash -c "$@"
	}
	if [ -n "$KEEP_BUILD" ] && [ -d "$ROOT$SRC/.git" ]; then
		in_root "set -e; cd $SRC; git fetch -q origin
			git cat-file -e $COMMIT 2>/dev/null || git fetch -q origin $COMMIT
			git checkout -q --force --detach $COMMIT; git clean -q -f -d"
	else
		rm -rf "${ROOT:?}$SRC"
		in_root "set -e; git clone -q --no-hardlinks /run/fr-origin $SRC; cd $SRC
			git cat-file -e $COMMIT 2>/dev/null || git fetch -q origin $COMMIT
			git checkout -q --detach $COMMIT"
	fi
	for f in "${COPY[@]}"; do
		cp "$REPO/$f" "$ROOT$SRC/$f"
	done
	echo "fresh-root: $(in_root "git -C $SRC log -1 --format='%h %s'")"
	[ ${#COPY[@]} -eq 0 ] || echo "fresh-root: with the work tree's ${COPY[*]}:" "$(in_root "git -C $SRC status --short")"
	# in the background, waited for: a TERM (CI's time-out, a person's
	# ^C) then ends this shell at once, and its EXIT trap ends what runs
	# in the root (a foreground child would have run on to its end)
	bg_in_root() {
		in_root "$@" &
		wait $!
	}
	t0=$(date +%s)
	rc=0
	if [ -n "$RUN" ]; then
		echo "fresh-root: $RUN"
		bg_in_root "cd $SRC && $RUN" || rc=$?
	elif [ ${#TESTS[@]} -eq 0 ]; then
		echo "fresh-root: scripts/check in $ROOT"
		bg_in_root "cd $SRC && exec scripts/check" || rc=$?
	else
		echo "fresh-root: meson test ${TESTS[*]} in $ROOT"
		# shellcheck disable=SC2016 # expanded by the root's shell
		bg_in_root 'cd '"$SRC"' && . scripts/deps.sh && fr_install_deps &&
			{ [ -d build-check ] && meson setup --reconfigure --werror build-check >/dev/null ||
				meson setup --werror build-check >/dev/null; } &&
			ninja -C build-check && exec meson test -C build-check --print-errorlogs "$@"' \
			fresh-root "${TESTS[@]}" || rc=$?
	fi
	echo "fresh-root: exit $rc after $(($(date +%s) - t0)) s"
	exit "$rc"
fi

# --- on the host: the root, then the run in a private mount namespace
exec 9>"$ROOT.lock"
flock -n 9 || die "$ROOT is in use by another run (lock $ROOT.lock)"
[ -d "$REPO/.git" ] || [ -f "$REPO/.git" ] || die "$REPO is not a git repository"
COMMIT=$(git -C "$REPO" rev-parse --verify "$COMMIT^{commit}") || die "no commit $COMMIT in $REPO"
for f in "${COPY[@]}"; do
	[ -f "$REPO/$f" ] || die "--copy $f: no such file in $REPO"
done
# mounts on the host in the root, ROOT or ROOT/...
under_root() {
	findmnt -n -l -o TARGET | awk -v r="$ROOT" '$0 == r || index($0, r "/") == 1'
}
[ -z "$(under_root)" ] || die "something is mounted in $ROOT: unmount it first"

if [ -n "$KEEP" ] && [ -f "$ROOT/$MARK" ]; then
	echo "fresh-root: reusing $ROOT (made $(cat "$ROOT/$MARK"))" | tee -a "$LOG"
else
	if [ -e "$ROOT" ]; then
		[ -f "$ROOT/$MARK" ] || die "$ROOT exists and was not made by this script: remove it or choose another --dir"
		echo "fresh-root: removing the old $ROOT"
		rm -rf --one-file-system "${ROOT:?}"
	fi
	command -v debootstrap >/dev/null || {
		echo "fresh-root: installing debootstrap" >&2
		# a machine whose package lists were never fetched has none
		apt-get update -qq >/dev/null 2>&1 || die "apt-get update failed: is the Debian mirror reachable?"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=300 \
			--no-install-recommends debootstrap >/dev/null
	}
	# the host's Debian mirror (one-line or deb822 sources), not its
	# security or third-party ones
	MIRROR=$({ cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null || true; } |
		sed -n -e 's/^deb \(\[[^]]*\] \)\{0,1\}\([^ ]*\) .*/\2/p' -e 's/^URIs: *//p' | tr ' ' '\n' |
		{ grep -E '^https?://.*/debian/?$' || true; } | head -1)
	[ -n "$MIRROR" ] || die "no Debian mirror in /etc/apt/sources.list*"
	INCLUDE=git
	[[ "$MIRROR" == https:* ]] && INCLUDE+=,ca-certificates
	VARIANT_ARG=()
	[ "$VARIANT" = default ] || VARIANT_ARG=(--variant="$VARIANT")
	echo "fresh-root: debootstrap ${VARIANT_ARG[*]} --include=$INCLUDE $SUITE $ROOT $MIRROR" | tee "$LOG"
	t0=$(date +%s)
	mkdir -p "$ROOT"
	date -u +%FT%TZ >"$ROOT/$MARK"
	# debootstrap mounts proc and sys in the target while it works: in a
	# namespace of its own, nothing is left on the host if it fails
	unshare -m --propagation private debootstrap "${VARIANT_ARG[@]}" --include="$INCLUDE" \
		"$SUITE" "$ROOT" "$MIRROR" >>"$LOG" 2>&1 ||
		die "debootstrap from $MIRROR failed (exit $?; is the mirror reachable?): see $LOG and $ROOT/debootstrap/debootstrap.log"
	echo "fresh-root: debootstrap took $(($(date +%s) - t0)) s" | tee -a "$LOG"
fi

rc=0
inner=(--inner --dir "$ROOT" --repo "$(realpath "$REPO")" --commit "$COMMIT")
[ -n "$KEEP_BUILD" ] && inner+=(--keep-build)
[ -n "$DISK_TMP" ] && inner+=(--disk-tmp)
[ -n "$CHROOT" ] && inner+=(--chroot)
[ -n "$RUN" ] && inner+=(--run "$RUN")
for e in "${ENVS[@]}"; do
	inner+=(--env "$e")
done
for f in "${COPY[@]}"; do
	inner+=(--copy "$f")
done
[ ${#TESTS[@]} -gt 0 ] && inner+=(-- "${TESTS[@]}")
echo "fresh-root: $(date -u +%FT%TZ) run, log $LOG" | tee -a "$LOG"
unshare -m --propagation private "$0" "${inner[@]}" </dev/null 2>&1 | tee -a "$LOG" || rc=$?
# the namespace is gone with its last process; check that nothing leaked
if [ -n "$(under_root)" ]; then
	echo "fresh-root: warning: mounts left in $ROOT on the host: $(under_root | tr '\n' ' ')" | tee -a "$LOG" >&2
	rc=1
elif [ -n "$REMOVE" ] && [ -f "$ROOT/$MARK" ]; then
	rm -rf --one-file-system "${ROOT:?}"
	echo "fresh-root: removed $ROOT" | tee -a "$LOG"
fi
exit "$rc"
