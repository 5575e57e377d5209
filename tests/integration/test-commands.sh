#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every command the check runs comes from a package that scripts/deps.sh
# installs, or from what a fresh Debian 12 root (debootstrap minbase + git)
# already has (issue 40: test-textfile scraped with curl, which only the
# development machines had, and failed in a fresh root).
#
# The words of the shell scripts scripts/check runs (its own, the tests',
# the tools') that name a program on PATH are looked up with dpkg -S; each
# program's package must be in the dependency closure of deps.sh's list
# and of minbase (priority required, apt, git).  A word that only looks
# like a command (a program named in a message) passes when its package
# is there, and needs a line in ALLOWED below when it is not.  Run on a
# development machine, which has more installed than the fresh root, this
# is what finds the missing package; in the fresh root itself the test
# that runs the command fails instead.
#   test-commands.sh SOURCE_DIR
set -euo pipefail
SRC=$1
cd "$SRC"
. scripts/deps.sh

# words that name a program here but are not run by the check, with why
declare -A ALLOWED=(
)

mapfile -t pkgs < <(fr_packages)
# the closure: what installing them (and minbase) brings; Depends and
# Pre-Depends only, as --no-install-recommends installs
mapfile -t base < <(dpkg-query -W -f '${Package} ${Priority}\n' | awk '$2 == "required" { print $1 }')
declare -A closure=()
while read -r p; do
	closure[${p%%:*}]=1
done < <(apt-cache depends --recurse --installed --important "${pkgs[@]}" "${base[@]}" apt git 2>/dev/null |
	grep -v '^ ' | tr -d '<>')

files=(scripts/check scripts/quickstart scripts/deps.sh tests/kernel/*.sh tests/integration/*.sh
	tests/tools/*.sh tests/fuzz/*.sh)
# the words in a command's place: first on a line, after | & ; ( ` $( and
# after the words that run the next one (if, then, exec, timeout 5, ...);
# comments and here-document bodies left out
mapfile -t words < <(/usr/bin/python3 - "${files[@]}" <<'PY' | sort -u
import re, sys
lead = re.compile(r"(?:^|[|;&(`]|\$\()\s*(?:(?:if|then|do|else|elif|while|until|exec|command|time|nohup|"
                  r"!|sudo|env|setsid|timeout\s+(?:-\S+\s+)*\S+|[A-Za-z_][A-Za-z0-9_]*=\S*)\s+)*"
                  r"([A-Za-z][A-Za-z0-9_.+-]*)(?=\s|$|[;|&)])")
for path in sys.argv[1:]:
    heredoc = None
    for line in open(path, errors="replace"):
        if heredoc:
            if line.strip() == heredoc:
                heredoc = None
            continue
        m = re.search(r"<<-?\s*['\"]?([A-Za-z_]+)['\"]?", line)
        if m:
            heredoc = m.group(1)
        line = re.sub(r"(^|\s)#.*", "", line)
        for w in lead.findall(line):
            print(w)
PY
)

bad=0 checked=0
declare -A seen_pkg=()
for w in "${words[@]}"; do
	[ -z "${ALLOWED[$w]+x}" ] || continue
	# builtins and keywords are bash's own; PATH as a fresh root has it
	# (no /usr/local, no version managers of the machine's users)
	[ "$(type -t "$w" 2>/dev/null)" = file ] || [ -z "$(type -t "$w" 2>/dev/null)" ] || continue
	path=$(PATH=/usr/sbin:/usr/bin:/sbin:/bin type -P "$w" 2>/dev/null) || continue
	checked=$((checked + 1))
	# usrmerge: dpkg knows a program by the path its package ships
	pkg=
	for cand in "$path" "$(realpath "$path")" "${path#/usr}" "/usr$path"; do
		pkg=$(dpkg-query -S "$cand" 2>/dev/null | grep -v '^diversion ' | head -1 | cut -d: -f1 | cut -d, -f1) &&
			[ -n "$pkg" ] && break
	done
	if [ -z "$pkg" ]; then
		echo "not ok: '$w' ($path) is in no Debian package"
		bad=$((bad + 1))
		continue
	fi
	seen_pkg[$pkg]=1
	if [ -z "${closure[$pkg]+x}" ]; then
		echo "not ok: '$w' ($path) comes from package $pkg, which scripts/deps.sh does not install (nor anything it installs, nor minbase)"
		grep -n -w -- "$w" "${files[@]}" | grep -v ':[[:space:]]*#' | head -3 | sed 's/^/    /'
		bad=$((bad + 1))
	fi
done
echo "# ${#words[@]} words, $checked name programs on PATH, from ${#seen_pkg[@]} packages; the closure of deps.sh and minbase: ${#closure[@]} packages"
if [ "$bad" -ne 0 ]; then
	echo "FAIL: $bad programs the check may run come from packages scripts/deps.sh does not install (add them to fr_packages)"
	exit 1
fi
echo "ok: every program the check's scripts name comes from a package deps.sh or minbase installs"
