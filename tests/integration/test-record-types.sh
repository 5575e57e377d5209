#!/bin/bash
# Every record type is named and documented: the types frctl knows (one
# list, lib/record-types.h, printed by `frctl --list-types`) each have a
# name of their own, are taken by --type and listed in its error, have a
# subsection of frctl(1)'s JSON OUTPUT and a place in its "type" field,
# a row in README's table of what is recorded, and a place in
# docs/internals.md's two lists (--type, the "type" field), which name no
# type that is not one.  The writers (JSON,
# text) switch on enum fr_record_type without a default: a type one of
# them lacks is a compile error (-Wswitch, the build's -Werror), not a
# test.
set -euo pipefail
SRC=$1
FRCTL=$2/ctl/frctl
fail() { echo "FAIL: $*" >&2; exit 1; }

types=$("$FRCTL" --list-types) || fail "frctl --list-types failed"
n=$(wc -l <<<"$types")
[ "$n" -ge 16 ] || fail "frctl --list-types: only $n types: $types"
[ "$(sort -u <<<"$types" | wc -l)" -eq "$n" ] || fail "frctl --list-types repeats a name: $types"
while read -r t; do
	[[ $t =~ ^[a-z]+$ ]] && [ "$t" != unknown ] || fail "frctl --list-types: '$t' is no name"
done <<<"$types"

# --type: an unknown one is refused with the list; a metadata type too
err=$("$FRCTL" dump --type no-such-type --input /dev/null 2>&1 >/dev/null) && fail "--type no-such-type accepted"
for t in $types; do
	[[ $err == *"$t"* ]] || fail "--type's error does not list $t: $err"
done
"$FRCTL" dump --type mapping --input /dev/null >/dev/null 2>&1 && fail "--type mapping (metadata) accepted"
[[ $("$FRCTL" dump --type mapping --input /dev/null 2>&1) == *"unknown record type"* ]] ||
	fail "--type mapping: not refused as a type"

# frctl(1): JSON OUTPUT has a subsection a type, and lists each in "type"
json=$(awk '/^\.SH JSON OUTPUT/ { on = 1; next } /^\.SH / { on = 0 } on' "$SRC/man/frctl.1")
typefield=$(awk '/^\.B type$/ { on = 1; next } on && /^\.TP/ { exit } on' <<<"$json")
missing=()
for t in $types; do
	grep -qx "\.SS $t" <<<"$json" || missing+=("frctl.1 JSON OUTPUT has no .SS $t")
	grep -Eq "(^|[ \"])$t([ ,.\"]|$)" <<<"$typefield" || missing+=("frctl.1's \"type\" field does not list $t")
	grep -q "^| \`$t\` |" "$SRC/README.md" || missing+=("README's table of records has no row for \`$t\`")
done

# docs/internals.md: --type's list (in parentheses) and the "type"
# field's (quoted), each the same set as --list-types
internals=$SRC/docs/internals.md
want=$(sort <<<"$types")
same_set() { # WHAT NAMES (one a line)
	local doc
	doc=$(sort <<<"$2")
	[ "$doc" = "$want" ] && return 0
	missing+=("docs/internals.md's $1 lacks [$(comm -23 <(echo "$want") <(echo "$doc") | paste -sd' ')]\
 and names what is no type [$(comm -13 <(echo "$want") <(echo "$doc") | paste -sd' ')]")
}
line=$(grep -m1 '^- \*\*--type TYPE\*\*' "$internals") || true
same_set "--type list" "$(sed -n 's/.*`frctl --list-types` prints (\([^;)]*\).*/\1/p' <<<"$line" | tr ',' '\n' | tr -d ' ')"
line=$(grep -m1 '^- \*\*type\*\*: ' "$internals") || true
same_set "\"type\" field" "$(grep -o '"[a-z]*"' <<<"$line" | tr -d '"')"

[ ${#missing[@]} -eq 0 ] || fail "$(printf '%s; ' "${missing[@]}")"
echo "ok: $n record types ($(paste -sd' ' <<<"$types")): each refused-or-taken by --type, in frctl(1)'s JSON OUTPUT, README and docs/internals.md"
