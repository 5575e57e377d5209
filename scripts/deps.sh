# Sourced by scripts/check and scripts/quickstart: installs the Debian 12
# packages the build and tests need, quietly when they are already there.
# Every command a test runs comes from one of these packages (or from what
# debootstrap's minbase has): tests/integration/test-commands.sh checks it.

# fr_packages: the list, one a line
fr_packages() {
	local pkgs=(meson ninja-build pkg-config gcc clang llvm libclang-rt-14-dev bpftool
		libbpf-dev libsystemd-dev liburing-dev libzstd-dev libconfig-dev
		libjson-c-dev libseccomp-dev zlib1g-dev libelf-dev libdw-dev libdebuginfod-dev debuginfod bash-completion jq zstd python3 valgrind nftables iproute2 util-linux linux-perf systemd-container nodejs
		procps bc man-db binutils
		# GNU time: a command's peak RSS (test-debug-bomb's frctl)
		time
		# C++ names demangled by libstdc++'s __cxa_demangle (libstdc++
		# -dev comes with g++), and the C++ programs the crash tests build
		g++
		# CPython 3.11's headers: the offsets of its frames that
		# flightrec keeps are checked against them (test-python-offsets)
		python3.11-dev
		# glibc's own symbols (__libc_read, not read) for the frames
		# test-offcpu-stacks expects; valgrind's dependency brings it too,
		# but the tests need it for themselves
		libc6-dbg
		# frctl report --format html opened in a real browser
		# (test-report-html), with a font to draw its text
		chromium fonts-dejavu-core
		# frctl's page escapes its text with GLib
		libglib2.0-dev
		# dump --format pprof: the profile message (protobuf-c), read
		# back by the real pprof in test-pprof (go tool pprof)
		libprotobuf-c-dev protobuf-c-compiler golang-go
		# the daemon's textfile served by the real node_exporter and
		# checked by promtool (test-textfile)
		prometheus prometheus-node-exporter
		# frctl upload: HTTP(S) PUT of incident files
		libcurl4-openssl-dev
		# the command the tests scrape node_exporter and serve uploads
		# with (test-textfile): the -dev package above is
		# the library only
		curl
		# test-systemd: systemd-coredump in the container catches a crash
		# whose report names its coredumpctl command
		systemd-coredump
		# the kernel matrix (tests/tools/kernel-matrix.sh): Debian 12's
		# 6.1 kernel booted in QEMU with a busybox initrd (cpio, and xz
		# for its compressed modules), the .deb fetched by apt-get and
		# unpacked by dpkg-deb
		qemu-system-x86 busybox-static cpio xz-utils
		# the power-cut tests' file system (tests/helpers/fr-cutfs.c),
		# FUSE: it keeps what was not synced in memory and loses it
		libfuse3-dev)
	printf '%s\n' "${pkgs[@]}"
}

fr_install_deps() {
	local missing=() p
	for p in $(fr_packages); do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "Missing packages: ${missing[*]}; run as root to install them." >&2
		return 1
	fi
	echo "Installing: ${missing[*]}" >&2
	# systemd-coredump's installation applies its sysctl.d file at once:
	# the kernel's core_pattern (one for the whole machine, containers
	# included) piped to itself, core_pipe_limit and suid_dumpable.  A host
	# not booted with systemd has no socket to take the cores: it keeps its
	# own settings
	local sysctls=(kernel/core_pattern kernel/core_pipe_limit fs/suid_dumpable) saved=() i
	for i in "${!sysctls[@]}"; do
		saved[i]=$(cat "/proc/sys/${sysctls[i]}" 2>/dev/null || true)
	done
	apt-get update -qq >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	for i in "${!sysctls[@]}"; do
		if [ -n "${saved[i]}" ] && [ "$(cat "/proc/sys/${sysctls[i]}")" != "${saved[i]}" ]; then
			printf '%s\n' "${saved[i]}" >"/proc/sys/${sysctls[i]}"
		fi
	done
}
