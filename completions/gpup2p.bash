# bash completion for gpup2p                                   -*- shell-script -*-
_gpup2p()
{
	local cur prev words cword
	_init_completion -s || return

	local global="--root --json --csv --jsonl --no-header --color= --verbose --quiet --help --version -v -q -h"
	local commands="topo bar acs snapshot help"
	local cmd="" i
	for ((i = 1; i < cword; i++)); do
		case ${words[i]} in
		--root) ((i++)) ;;
		-*) ;;
		*) cmd=${words[i]}; break ;;
		esac
	done

	case $prev in
	--root) _filedir -d; return ;;
	--match) COMPREPLY=($(compgen -W "10de:* 15b3:* 1af4:1110" -- "$cur")); return ;;
	--mode) COMPREPLY=($(compgen -W "redirect zero" -- "$cur")); return ;;
	--state) _filedir; return ;;
	--device)
		local devs
		devs=$(ls /sys/bus/pci/devices 2>/dev/null)
		COMPREPLY=($(compgen -W "$devs" -- "$cur"))
		return
		;;
	esac
	if [[ $cur == --color=* ]]; then
		COMPREPLY=($(compgen -W "auto always never" -- "${cur#--color=}"))
		return
	fi

	case $cmd in
	"") COMPREPLY=($(compgen -W "$global $commands" -- "$cur")) ;;
	help) COMPREPLY=($(compgen -W "topo bar acs snapshot" -- "$cur")) ;;
	acs) COMPREPLY=($(compgen -W "--match --disable --restore --all --device --mode --state --dry-run $global" -- "$cur")) ;;
	topo) COMPREPLY=($(compgen -W "--tree --all --match $global" -- "$cur")) ;;
	bar) COMPREPLY=($(compgen -W "--all --match $global" -- "$cur")) ;;
	snapshot)
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--force --dir $global" -- "$cur"))
		else
			_filedir 'tar.gz'
		fi
		;;
	esac
	[[ ${COMPREPLY-} == *= ]] && compopt -o nospace
}
complete -F _gpup2p gpup2p
