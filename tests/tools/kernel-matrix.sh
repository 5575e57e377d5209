#!/bin/bash
# The kernel matrix: boots Debian 12's newest stock 6.1 kernel in QEMU and
# runs tests/kernel/matrix-smoke.sh in it, against this machine's own root
# file system (shared read-only over virtio-9p), so the guest runs the very
# build and libraries of the host.  Our users run that kernel; the host's
# (6.18 here) passes verifier checks and CO-RE relocations that 6.1 does
# not.
#
#   fetch   linux-image-6.1.0-N-amd64 (the newest N; bookworm-security has
#           it), found with a private apt source list made from the mirror
#           apt is configured with, so a debootstrap'ed root that lists only
#           the main mirror gets it too; the .deb is cached in $CACHE
#   initrd  busybox-static and the 9p modules (with their dependencies
#           from modules.dep): /init mounts the host's root read-only,
#           tmpfs on /tmp /run /var/tmp, the source and build trees
#           shared again at their paths, proc, sysfs, devtmpfs,
#           cgroup2, bpffs, tracefs, and a writable 9p share for the
#           results, then runs the smoke script and powers off
#   boot    qemu-system-x86_64 -accel tcg -cpu max, 2 vCPUs, 2 GiB (KVM
#           does not run vCPUs under this machine's nesting); the serial
#           console goes to $LOG
#
# Exits 0 when every check passed, 1 with one "kernel-matrix: FAIL ..."
# line per failed check (and the console's tail) otherwise.  A kernel that
# cannot be downloaded is a failure, not a skip.
#
# Usage: tests/tools/kernel-matrix.sh BUILD_DIR
# Environment:
#   FR_MATRIX_CACHE    the cache (default /var/cache/flightrec-matrix)
#   FR_MATRIX_KERNEL   a package name instead of the newest 6.1
#   FR_MATRIX_SECURITY the security archive's URI (default: derived from
#                      the configured mirror, .../debian -> .../debian-security)
#   FR_MATRIX_TIMEOUT  seconds the guest may take (default 600)
#   FR_MATRIX_LOG      the console log (default BUILD_DIR/meson-logs/kernel-matrix-console.log)
set -euo pipefail

BUILD=$(cd "${1:?usage: kernel-matrix.sh BUILD_DIR}" && pwd)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${FR_MATRIX_CACHE:-/var/cache/flightrec-matrix}
TIMEOUT=${FR_MATRIX_TIMEOUT:-600}
LOG=${FR_MATRIX_LOG:-$BUILD/meson-logs/kernel-matrix-console.log}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

die() {
	echo "kernel-matrix: FAIL: $*" >&2
	exit 1
}
[ "$(id -u)" -eq 0 ] || die "needs root (QEMU's 9p share of / reads every file)"
for p in qemu-system-x86_64 busybox dpkg-deb apt-get cpio; do
	command -v "$p" >/dev/null || die "$p is missing (scripts/deps.sh installs it)"
done
[ -x "$BUILD/daemon/flightrecd" ] || die "no $BUILD/daemon/flightrecd: build first"
mkdir -p "$CACHE" "$(dirname "$LOG")"
W=$(mktemp -d /tmp/fr-matrix-XXXXXX)
QPID=
cleanup() {
	[ -n "$QPID" ] && kill "$QPID" 2>/dev/null && wait "$QPID" 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 143' TERM INT
t_start=$SECONDS

# --- fetch ---------------------------------------------------------------
# The first Debian mirror apt uses (one-line or deb822 sources)
mirror() {
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk '
			/^[ \t]*#/ { next }
			/^deb[ \t]/ { for (i = 2; i <= NF; i++) if ($i ~ /^https?:\/\//) { print $i; exit } }
			/^URIs:/ { print $2; exit }
		' "$f"
	done | grep -E '/debian/?$' | head -1 | sed 's:/*$::'
}
MIRROR=$(mirror)
[ -n "$MIRROR" ] || MIRROR=http://deb.debian.org/debian
SECURITY=${FR_MATRIX_SECURITY:-${MIRROR}-security}
A=$CACHE/apt
mkdir -p "$A/lists/partial" "$A/archives/partial" "$A/parts"
cat >"$A/sources.list" <<EOF
deb [signed-by=$KEYRING] $MIRROR bookworm main
deb [signed-by=$KEYRING] $SECURITY bookworm-security main
EOF
APT=(-o Dir::Etc::SourceList="$A/sources.list" -o Dir::Etc::SourceParts="$A/parts"
	-o Dir::State::Lists="$A/lists" -o Dir::Cache="$A" -o Dir::Cache::archives="$A/archives"
	-o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= -o APT::Architecture=amd64
	-o Debug::NoLocking=1)
if ! apt-get "${APT[@]}" -qq update >"$W/apt.log" 2>&1; then
	# a cached kernel still tests; say that it may not be the newest
	ls "$CACHE"/linux-image-6.1.0-*-amd64_*.deb >/dev/null 2>&1 ||
		die "cannot download the 6.1 kernel's package list from $MIRROR and $SECURITY: $(grep -m1 -E '^(E|W):' "$W/apt.log" || tail -1 "$W/apt.log")"
	echo "kernel-matrix: apt update failed ($(grep -m1 -E '^(E|W):' "$W/apt.log" || true)); using the cached package, which may not be the newest" >&2
	PKG=${FR_MATRIX_KERNEL:-$(ls "$CACHE"/linux-image-6.1.0-*-amd64_*.deb | sed 's:.*/::; s:_.*::' | sort -V | tail -1)}
else
	PKG=${FR_MATRIX_KERNEL:-$(apt-cache "${APT[@]}" pkgnames linux-image-6.1.0- |
		grep -E '^linux-image-6\.1\.0-[0-9]+-amd64$' | sort -V | tail -1)}
	[ -n "$PKG" ] || die "no linux-image-6.1.0-*-amd64 in $MIRROR bookworm or $SECURITY bookworm-security"
fi
DEB=$(ls "$CACHE/${PKG}"_*.deb 2>/dev/null | sort -V | tail -1 || true)
if [ -z "$DEB" ]; then
	(cd "$CACHE" && apt-get "${APT[@]}" -qq download "$PKG") >"$W/apt.log" 2>&1 ||
		die "cannot download $PKG: $(grep -m1 -E '^(E|W):' "$W/apt.log" || tail -1 "$W/apt.log")"
	DEB=$(ls "$CACHE/${PKG}"_*.deb | sort -V | tail -1)
	# older kernels' packages go: one is enough
	find "$CACHE" -maxdepth 1 -name 'linux-image-6.1.0-*.deb' ! -path "$DEB" -delete
fi
KVER=${PKG#linux-image-}
K=$CACHE/$KVER
if [ ! -f "$K/.unpacked" ]; then
	rm -rf "$K"
	dpkg-deb -x "$DEB" "$K" || die "cannot unpack $DEB"
	touch "$K/.unpacked"
	find "$CACHE" -mindepth 1 -maxdepth 1 -type d -name '6.1.0-*' ! -path "$K" -exec rm -rf {} +
fi
echo "kernel-matrix: $(basename "$DEB") ($((SECONDS - t_start)) s)"

# --- initrd ---------------------------------------------------------------
# modules NAME...: the module files NAME needs, dependencies first (from
# each module's own "depends=": the package has no modules.dep, and a CI
# root need not have depmod)
MODDIR=$K/lib/modules/$KVER
declare -A MODPATH=()
while read -r f; do
	n=${f##*/}
	n=${n%%.ko*}
	MODPATH[${n//-/_}]=$f
done < <(cd "$MODDIR" && find kernel -name '*.ko*')
declare -A MODSEEN=()
modules() {
	local m f dep
	for m in "$@"; do
		m=${m//-/_}
		f=${MODPATH[$m]:-}
		[ -n "$f" ] || continue # built in
		[ -z "${MODSEEN[$m]:-}" ] || continue
		MODSEEN[$m]=1
		case "$f" in
		*.ko) dep=$(tr '\0' '\n' <"$MODDIR/$f" | grep -a -m1 '^depends=' || true) ;;
		*.xz) dep=$(xz -dc "$MODDIR/$f" | tr '\0' '\n' | grep -a -m1 '^depends=' || true) ;;
		*.zst) dep=$(zstd -qdc "$MODDIR/$f" | tr '\0' '\n' | grep -a -m1 '^depends=' || true) ;;
		esac
		dep=${dep#depends=}
		modules ${dep//,/ }
		echo "$f"
	done
}
I=$W/initrd
mkdir -p "$I"/{bin,dev,proc,sys,newroot,modules}
cp /bin/busybox "$I/bin/busybox"
n=0
for m in $(modules virtio_pci 9pnet_virtio 9p); do
	n=$((n + 1))
	case "$m" in
	*.xz) xz -dc "$MODDIR/$m" >"$I/modules/$(printf %02d $n).ko" ;;
	*.zst) zstd -qdc "$MODDIR/$m" >"$I/modules/$(printf %02d $n).ko" ;;
	*) cp "$MODDIR/$m" "$I/modules/$(printf %02d $n).ko" ;;
	esac
done
cat >"$I/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for m in /modules/*.ko; do insmod "$m" || echo "fr-matrix-init: insmod $m failed"; done
R=/newroot
say() { echo "fr-matrix-init: $*"; }
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=512000 fr-root $R || { say "cannot mount the host's root"; poweroff -f; }
for d in tmp run var/tmp; do mount -t tmpfs -o mode=1777 tmpfs $R/$d; done
# the source and build trees at their paths, over whatever covers them
# now (a checkout under /tmp): shares of their own
for t in src build; do
	p=$(cat /$t-path)
	mkdir -p $R$p 2>/dev/null
	mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=512000 fr-$t $R$p || say "cannot mount the $t tree at $p"
done
mount -t proc proc $R/proc
mount -t sysfs sysfs $R/sys
mount -t devtmpfs devtmpfs $R/dev
mkdir -p $R/dev/pts $R/dev/shm
mount -t devpts devpts $R/dev/pts
mount -t tmpfs tmpfs $R/dev/shm
mount -t cgroup2 cgroup2 $R/sys/fs/cgroup
mount -t bpf bpf $R/sys/fs/bpf
mount -t tracefs tracefs $R/sys/kernel/tracing
mount -t debugfs debugfs $R/sys/kernel/debug
mkdir -p $R/tmp/fr-matrix
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 fr-results $R/tmp/fr-matrix || say "cannot mount the results share"
say "kernel $(uname -r), running the smoke suite"
chroot $R /usr/bin/env -i HOME=/tmp PATH=/usr/sbin:/usr/bin:/sbin:/bin /bin/bash /tmp/fr-matrix/run.sh
say "smoke suite exited $?"
sync
umount $R/tmp/fr-matrix
poweroff -f
EOF
chmod +x "$I/init"
echo "$SRC" >"$I/src-path"
echo "$BUILD" >"$I/build-path"
(cd "$I" && find . | cpio -o -H newc --quiet | gzip -1) >"$W/initrd.gz"

# --- boot -----------------------------------------------------------------
RES=$W/results
mkdir -p "$RES"
cat >"$RES/run.sh" <<EOF
exec bash "$SRC/tests/kernel/matrix-smoke.sh" "$BUILD" "$SRC" /tmp/fr-matrix >/tmp/fr-matrix/smoke.log 2>&1
EOF
t_boot=$SECONDS
timeout --foreground -k 5 "$TIMEOUT" qemu-system-x86_64 -accel tcg -cpu max -smp 2 -m 2G \
	-nodefaults -display none -no-reboot -monitor none \
	-serial "file:$LOG" \
	-kernel "$K/boot/vmlinuz-$KVER" -initrd "$W/initrd.gz" \
	-append "console=ttyS0 panic=-1 quiet loglevel=4 mitigations=off" \
	-virtfs "local,path=/,mount_tag=fr-root,security_model=none,readonly=on,multidevs=remap" \
	-virtfs "local,path=$RES,mount_tag=fr-results,security_model=none,multidevs=remap" \
	-virtfs "local,path=$SRC,mount_tag=fr-src,security_model=none,readonly=on,multidevs=remap" \
	-virtfs "local,path=$BUILD,mount_tag=fr-build,security_model=none,readonly=on,multidevs=remap" \
	</dev/null >"$W/qemu.out" 2>&1 &
QPID=$!
rc=0
wait $QPID || rc=$?
QPID=
echo "kernel-matrix: guest ran $((SECONDS - t_boot)) s (qemu exit $rc), $((SECONDS - t_start)) s in all; console: $LOG"
# kept beside the console log: the smoke suite's output, and the daemon's
# log (a verifier's rejection is there in full) and status
for f in smoke.log daemon.log status.json; do
	[ -f "$RES/$f" ] && cp "$RES/$f" "$(dirname "$LOG")/kernel-matrix-$f"
done

if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
	echo "kernel-matrix: FAIL: the guest did not power off within $TIMEOUT s" >&2
fi
if [ ! -f "$RES/result" ]; then
	echo "--- console (tail):" >&2
	tail -30 "$LOG" >&2 || true
	[ -f "$RES/smoke.log" ] && { echo "--- smoke log (tail):" >&2; tail -30 "$RES/smoke.log" >&2; }
	grep -v '^$' "$W/qemu.out" >&2 || true
	die "the smoke suite left no result on $KVER"
fi
cat "$RES/result"
if grep -q '^FAIL' "$RES/result"; then
	echo "--- smoke log (tail):" >&2
	tail -40 "$RES/smoke.log" >&2
	if grep -q -E '^<[0-3]>|^libbpf:' "$RES/daemon.log" 2>/dev/null; then
		echo "--- the daemon's errors (all of its log: $(dirname "$LOG")/kernel-matrix-daemon.log):" >&2
		grep -E '^<[0-3]>|^libbpf:' "$RES/daemon.log" | head -60 >&2
	fi
	grep '^FAIL' "$RES/result" | sed "s/^/kernel-matrix: $KVER: /" >&2
	exit 1
fi
echo "kernel-matrix: $KVER: every check passed in $((SECONDS - t_start)) s"
