#!/bin/bash
# The bash completion that meson installs: it completes verbs, each verb's
# options, format and record type names, with bash-completion loaded as
# an interactive shell would have it.  Its format lists are typed in it:
# they must be the formats frctl takes (dump's from its table, as dump
# --help prints it; report's as its error lists them).
set -euo pipefail
SRC=$1
# the completion asks frctl for the record types: the one built here
PATH=$2/ctl:$PATH
fail() { echo "FAIL: $*" >&2; exit 1; }
. /usr/share/bash-completion/bash_completion
. "$SRC/completion/frctl.bash"

# complete WORDS...: the candidates for the last word
complete_words() {
	COMP_WORDS=("$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMP_LINE="$*"
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	_frctl frctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
	printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' '
}

got=$(complete_words frctl "")
for v in dump report rules status boots mark freeze incidents upload; do
	[[ " $got " == *" $v "* ]] || fail "verbs: '$got' lacks $v"
done
# the names of dump --help's --format lines: column 23 on, padded to 10
formats=$(frctl dump --help | awk '/^  --format FMT/ { on = 1 } on && /^  -/ && !/^  --format FMT/ { on = 0 }
	on { n = substr($0, 23, 10); gsub(/ /, "", n); if (n != "") print n }' | sort | tr '\n' ' ')
[ "$(echo "$formats" | wc -w)" -ge 6 ] || fail "frctl dump --help lists formats: '$formats'"
[ "$(complete_words frctl dump --format "")" = "$formats" ] ||
	fail "dump --format: $(complete_words frctl dump --format "") is not dump --help's: $formats"
formats=$({ frctl report --format no-such-format 2>&1 >/dev/null || true; } | sed -n 's/.*unknown format "no-such-format" (\(.*\))$/\1/p' |
	tr -d ' ' | tr ',' '\n' | sort | tr '\n' ' ')
[ "$(echo "$formats" | wc -w)" -ge 3 ] || fail "frctl report --format no-such-format lists formats: '$formats'"
[ "$(complete_words frctl report --format "")" = "$formats" ] ||
	fail "report --format: $(complete_words frctl report --format "") is not what report takes: $formats"
[ "$(complete_words frctl report --ty)" = "--type " ] || fail "report --ty: $(complete_words frctl report --ty)"
[ "$(complete_words frctl dump --type sa)" = "sample " ] || fail "--type sa: $(complete_words frctl dump --type sa)"
types=$(frctl --list-types | sort | tr '\n' ' ')
[ "$(echo "$types" | wc -w)" -ge 16 ] || fail "frctl --list-types: $types"
[ "$(complete_words frctl dump --type "")" = "$types" ] || fail "--type: $(complete_words frctl dump --type "") is not frctl --list-types: $types"
[ "$(complete_words frctl --list)" = "--list-types " ] || fail "--list: $(complete_words frctl --list)"
[ "$(complete_words frctl --store /tmp status --j)" = "--json " ] || fail "status --j after --store"
[ "$(complete_words frctl boots --i)" = "--input " ] || fail "boots --i: $(complete_words frctl boots --i)"
[ "$(complete_words frctl report --debug)" = "--debug-dir " ] || fail "report --debug: $(complete_words frctl report --debug)"
[ "$(complete_words frctl report --red)" = "--redact " ] || fail "report --red: $(complete_words frctl report --red)"
# --redact=LIST as bash gives it: "=" a word of its own, the line unsplit
got=$(COMP_WORDS=(frctl dump --redact = args,t) COMP_CWORD=4 COMP_LINE="frctl dump --redact=args,t" COMP_POINT=26 \
	COMPREPLY=() && _frctl frctl args,t = && printf '%s ' "${COMPREPLY[@]}")
[ "$got" = "args,tcp " ] || fail "dump --redact=args,t: '$got'"
got=$(complete_words frctl dump --c)
[[ " $got " == *" --cgroup "* && " $got " == *" --comm "* && " $got " == *" --config "* ]] || fail "dump --c: $got"
echo "ok: bash completion of verbs, options, formats and record types"
