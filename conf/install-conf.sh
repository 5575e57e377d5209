#!/bin/sh
# meson install step: puts the shipped configuration at
# $DESTDIR/etc/flightrec/flightrec.conf unless a file is there already (an
# administrator's configuration is never overwritten; the pristine copy is
# always installed under share/flightrec for comparison).
#   install-conf.sh SOURCE_CONF
set -eu
dir="${DESTDIR:-}/etc/flightrec"
if [ -e "$dir/flightrec.conf" ]; then
	echo "Keeping existing $dir/flightrec.conf (the shipped default is in share/flightrec)"
	exit 0
fi
install -d -m 0755 "$dir"
install -m 0644 "$1" "$dir/flightrec.conf"
echo "Installing $1 to $dir/flightrec.conf"
