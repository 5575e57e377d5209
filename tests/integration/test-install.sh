#!/bin/bash
# meson install into a DESTDIR: binaries (flightrecd's parser helper in
# libexecdir, where the daemon looks for it), unit, man pages, completion and
# the default configuration land in their standard places; the unit runs
# the installed daemon; the installed config passes --check-config; a
# second install keeps an edited /etc/flightrec/flightrec.conf.
#   test-install.sh BUILD_DIR
set -euo pipefail
BUILD=$1
D=$(mktemp -d /tmp/fr-install-XXXXXX)
trap 'rm -rf "$D"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

prefix=$(meson introspect "$BUILD" --buildoptions | jq -r '.[] | select(.name == "prefix") | .value')
libexec=$(meson introspect "$BUILD" --buildoptions | jq -r '.[] | select(.name == "libexecdir") | .value')
meson install -C "$BUILD" --destdir "$D" --no-rebuild --quiet >/dev/null
for f in "$prefix/sbin/flightrecd" "$prefix/$libexec/flightrec-parse" "$prefix/bin/frctl" "$prefix/lib/systemd/system/flightrecd.service" \
	"$prefix/share/man/man8/flightrecd.8" "$prefix/share/man/man5/flightrec.conf.5" \
	"$prefix/share/man/man5/flightrec-store.5" "$prefix/share/man/man1/frctl.1" \
	"$prefix/share/flightrec/flightrec.conf" /etc/flightrec/flightrec.conf; do
	[ -f "$D$f" ] || fail "not installed: $f"
done
find "$D" -path '*completions/frctl' | grep -q . || fail "bash completion not installed"
echo "ok: installed into DESTDIR (prefix $prefix)"

grep -qx "ExecStart=$prefix/sbin/flightrecd" "$D$prefix/lib/systemd/system/flightrecd.service" ||
	fail "the unit does not run $prefix/sbin/flightrecd: $(grep ExecStart "$D$prefix/lib/systemd/system/flightrecd.service")"
out=$("$D$prefix/sbin/flightrecd" --check-config --config "$D/etc/flightrec/flightrec.conf") ||
	fail "installed config rejected: $out"
[ "$out" = "configuration OK" ] || fail "check-config said: $out"
echo "ok: the unit runs the installed daemon; the installed config is valid"

echo '# edited by the administrator' >>"$D/etc/flightrec/flightrec.conf"
meson install -C "$BUILD" --destdir "$D" --no-rebuild --quiet >/dev/null
tail -1 "$D/etc/flightrec/flightrec.conf" | grep -q 'edited by the administrator' ||
	fail "a second install overwrote /etc/flightrec/flightrec.conf"
cmp -s "$D$prefix/share/flightrec/flightrec.conf" "$(dirname "$0")/../../conf/flightrec.conf" ||
	fail "the pristine copy differs from conf/flightrec.conf"
echo "ok: a second install keeps the edited /etc/flightrec/flightrec.conf"
