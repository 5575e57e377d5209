# bash completion for frctl(1)                                -*- shell-script -*-
# SPDX-License-Identifier: LGPL-2.1-or-later

_frctl_incident_ids()
{
	# the ids frctl itself lists, for the store the command line names
	local store=() i
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		-s | --store) store=(--store "${COMP_WORDS[i + 1]}") ;;
		esac
	done
	frctl "${store[@]}" incidents --json 2>/dev/null | grep -o '"id":"[^"]*"' | cut -d'"' -f4
}

_frctl()
{
	local cur prev words cword split verb="" i
	_init_completion -s || return

	local global='-c --config -s --store --socket -h --help --version'
	local verbs='dump report rules status boots mark freeze incidents upload'
	local window='--last --since --until --boot --input --incident --pid --comm --cgroup --type -q --quiet
		--debug-dir --no-debuginfod --redact'

	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		-c | --config | -s | --store | --socket) ((i++)) ;;
		-*) ;;
		*)
			verb=${COMP_WORDS[i]}
			break
			;;
		esac
	done

	case $prev in
	-c | --config | --input | -o | --output | --state)
		_filedir
		return
		;;
	-s | --store | --debug-dir)
		_filedir -d
		return
		;;
	--socket)
		_filedir
		return
		;;
	--format)
		# (tests/integration/test-completion.sh fails when these are
		# not the formats frctl takes: dump's table, report's)
		if [[ $verb == report ]]; then
			COMPREPLY=($(compgen -W 'text html json' -- "$cur"))
		else
			COMPREPLY=($(compgen -W 'text json perfetto folded bundle pprof' -- "$cur"))
		fi
		return
		;;
	--type)
		# the types frctl knows (lib/record-types.h)
		COMPREPLY=($(compgen -W "$("${COMP_WORDS[0]}" --list-types 2>/dev/null)" -- "$cur"))
		return
		;;
	--incident | --baseline-incident)
		COMPREPLY=($(compgen -W "$(_frctl_incident_ids)" -- "$cur"))
		return
		;;
	--last | --since | --until | --baseline-since | --baseline-until | --boot | --pid | --comm | --cgroup | --reason | --rule)
		return
		;;
	--redact)
		# --redact=LIST: the classes, comma-separated (a bare --redact
		# takes no next word)
		if $split; then
			local head=""
			[[ $cur == *,* ]] && head=${cur%,*},
			COMPREPLY=($(compgen -P "$head" -W 'args home tcp marks urls' -- "${cur##*,}"))
			return
		fi
		;;
	esac
	$split && return

	if [[ -z $verb ]]; then
		COMPREPLY=($(compgen -W "$verbs $global --list-types" -- "$cur"))
		return
	fi
	case $verb in
	dump) COMPREPLY=($(compgen -W "$window --format -o --output --stats --sizes --stacks --offcpu -f --follow $global" -- "$cur")) ;;
	report) COMPREPLY=($(compgen -W "$window --format -o --output --baseline-since --baseline-until --baseline-incident --no-baseline $global" -- "$cur")) ;;
	rules) COMPREPLY=($(compgen -W "test --rule --last --since --until --json $global" -- "$cur")) ;;
	boots) COMPREPLY=($(compgen -W "--input --json $global" -- "$cur")) ;;
	status | incidents) COMPREPLY=($(compgen -W "--json $global" -- "$cur")) ;;
	freeze) COMPREPLY=($(compgen -W "--reason $global" -- "$cur")) ;;
	mark) COMPREPLY=($(compgen -W "$global" -- "$cur")) ;;
	upload) COMPREPLY=($(compgen -W "--state $global" -- "$cur")) ;;
	esac
} && complete -F _frctl frctl
