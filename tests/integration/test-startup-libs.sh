#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The programs do not link the libraries that only one verb needs:
# libcurl (frctl upload) and libdebuginfod (names from debuginfod
# servers) are opened when used (lib/dlopen-lib.h).  Linked, they and the
# 30 libraries they need took 7 of the 10.4 ms of every frctl start
# (`frctl --version`, every status and dump alike) and of every start of
# the daemon and its parser helper.  And frctl still starts with them
# out of reach: `frctl --version` in a mount namespace where both are
# /dev/null.
#   test-startup-libs.sh BUILD_DIR
set -euo pipefail
BUILD=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
for p in ctl/frctl daemon/flightrecd daemon/flightrec-parse; do
	needed=$(readelf -d "$BUILD/$p" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
	[ -n "$needed" ] || fail "readelf -d $p listed no NEEDED library"
	if grep -qE 'libcurl|libdebuginfod' <<<"$needed"; then
		fail "$p links $(grep -oE 'lib(curl|debuginfod)[^ ]*' <<<"$needed" | tr '\n' ' ')(all: $needed)"
	fi
	echo "ok: $p needs $(wc -w <<<"$needed") libraries, neither libcurl nor libdebuginfod"
done
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
	curl=$(readlink -f /usr/lib/x86_64-linux-gnu/libcurl.so.4 || true)
	dbgd=$(readlink -f /usr/lib/x86_64-linux-gnu/libdebuginfod.so.1 || true)
	[ -e "$curl" ] && [ -e "$dbgd" ] || fail "libcurl.so.4 or libdebuginfod.so.1 missing (libcurl4, libdebuginfod1)"
	out=$(unshare -m sh -c 'mount --bind /dev/null "$1" && mount --bind /dev/null "$2" && "$3" --version' sh \
		"$curl" "$dbgd" "$BUILD/ctl/frctl") || fail "frctl --version without libcurl and libdebuginfod: $out"
	echo "ok: frctl --version runs with both libraries unreadable: $out"
fi
echo "startup-libs: all checks passed"
