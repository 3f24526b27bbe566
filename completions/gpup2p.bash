# bash completion for gpup2p                                   -*- shell-script -*-
_gpup2p()
{
	local cur prev words cword
	_init_completion -s || return

	local global="--root --json --csv --jsonl --no-header --color= --verbose --quiet --help --version -v -vv -q -h"
	local commands="doctor topo bar acs enable pin map copy bench report snapshot help"
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
	--p2p) COMPREPLY=($(compgen -W "on off both" -- "$cur")); return ;;
	--engine) COMPREPLY=($(compgen -W "ce sm both" -- "$cur")); return ;;
	--stride) COMPREPLY=($(compgen -W "8 64 128 4K" -- "$cur")); return ;;
	--seed) return ;;
	--size|--min|--max) COMPREPLY=($(compgen -W "4K 64K 1M 64M 256M 1G" -- "$cur")); return ;;
	--min-bw) COMPREPLY=($(compgen -W "h2d= d2h= d2d= p2p= bidir=" -- "$cur")); compopt -o nospace; return ;;
	--gpu|--to|--iters|--reps|--numa|--factor|--offset) return ;;
	--via) COMPREPLY=($(compgen -W "map cuda" -- "$cur")); return ;;
	--isa) COMPREPLY=($(compgen -W "memcpy sse4.1 avx2 avx512 movdir64b" -- "$cur")); return ;;
	--state) _filedir; return ;;
	--expect) [[ $cmd == doctor ]] && _filedir; return ;; # doctor: a file; report: a host list
	--below) COMPREPLY=($(compgen -W "0.9 0.8 0.5" -- "$cur")); return ;;
	--textfile) _filedir -d; return ;;
	--only|--skip|--explain)
		local ids pre=""
		ids=$(gpup2p doctor --list 2>/dev/null | awk '{ print $1; print $2 }' | sort -u)
		[[ $cur == *,* ]] && pre=${cur%,*},
		COMPREPLY=($(compgen -P "$pre" -W "$ids" -- "${cur##*,}"))
		return
		;;
	--module) _filedir ko; return ;;
	--op) # bench rdma's operations, else bench's directions
		if [[ " ${words[*]} " == *" rdma "* ]]; then COMPREPLY=($(compgen -W "write read send all" -- "$cur"))
		else COMPREPLY=($(compgen -W "write read both" -- "$cur")); fi
		return ;;
	--mem|--peer-mem) COMPREPLY=($(compgen -W "host gpu gpu:0 auto" -- "$cur")); return ;;
	--connect) _known_hosts_real -- "$cur"; return ;;
	--ib-port|--gid-index|--peer-ib-port|--peer-gid-index|--rdma-port|--timeout|--bind|--listen) return ;;
	--peer-device) COMPREPLY=($(compgen -W "$(ls /sys/class/infiniband 2>/dev/null)" -- "$cur")); return ;;
	--device)
		local devs
		# bench rdma: an RDMA device; acs: a PCI function
		if [[ $cmd == bench ]]; then devs=$(ls /sys/class/infiniband 2>/dev/null); else devs=$(ls /sys/bus/pci/devices 2>/dev/null); fi
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
	help) COMPREPLY=($(compgen -W "doctor topo bar acs enable pin map copy bench report snapshot" -- "$cur")) ;;
	acs) COMPREPLY=($(compgen -W "--match --disable --restore --all --device --mode --state --force --dry-run $global" -- "$cur")) ;;
	enable) COMPREPLY=($(compgen -W "--module --peermem --status --disable --dry-run $global" -- "$cur")) ;;
	pin) COMPREPLY=($(compgen -W "--gpu --size --persistent $global" -- "$cur")) ;;
	map) COMPREPLY=($(compgen -W "--gpu --size --offset --iters --isa $global" -- "$cur")) ;;
	copy)
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--gpu --to --size --pinned --pageable --iters --numa --via --all-pairs $global" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "h2d d2h d2d peer" -- "$cur"))
		fi
		;;
	bench)
		if [[ ${words[i + 1]-} == rdma ]] && ((cword > i + 1)); then
			COMPREPLY=($(compgen -W "--op --lat --mem --peer-mem --device --ib-port --gid-index --peer-device --peer-ib-port --peer-gid-index --server --bind --connect --rdma-port --timeout --size --min --max --factor --iters --reps --min-bw --no-verify $global" -- "$cur"))
		elif [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--gpu --size --min --max --factor --iters --reps --pinned --pageable --numa --p2p --engine --sm --op --duplex --stride --random --seed --min-bw --verify --no-verify $global" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "h2d d2h d2d p2p bidir latency all one2all all2one all2host host2all rdma" -- "$cur"))
		fi
		;;
	doctor) COMPREPLY=($(compgen -W "--only --skip --active --no-cuda --kmsg --expect --strict --list --explain --pretty --prometheus --textfile --alarms-only --nagios $global" -- "$cur")) ;;
	topo) COMPREPLY=($(compgen -W "--tree --all --match $global" -- "$cur")) ;;
	bar) COMPREPLY=($(compgen -W "--all --match $global" -- "$cur")) ;;
	report)
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--expect --below --baseline $global" -- "$cur"))
		else
			_filedir
		fi
		;;
	snapshot)
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--force --dir --no-hostname $global" -- "$cur"))
		else
			_filedir 'tar.gz'
		fi
		;;
	esac
	[[ ${COMPREPLY-} == *= ]] && compopt -o nospace
}
complete -F _gpup2p gpup2p
