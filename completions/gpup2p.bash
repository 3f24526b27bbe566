# bash completion for gpup2p                                   -*- shell-script -*-
# The candidates come from gpup2p's option tables through the hidden `gpup2p __complete WORD...`:
# one a line, "word<TAB>description", or a directive ":file", ":file:EXT", ":dir".
_gpup2p()
{
	local cur prev words cword split
	_init_completion -s || return

	local line pre=""
	local -a cands=()
	# --opt=value: the candidates are whole words, readline completes the part after '='
	[[ $split == true ]] && pre=$prev=
	while IFS=$'\t' read -r line _; do
		case $line in
		:dir) _filedir -d ;;
		:file) _filedir ;;
		:file:*) _filedir "${line#:file:}" ;;
		*) cands+=("${line#"$pre"}") ;;
		esac
	done < <("${words[0]}" __complete "${words[@]:1:cword-1}" "$pre$cur" 2>/dev/null)
	((${#cands[@]})) || return
	local IFS=$'\n'
	COMPREPLY+=($(compgen -W "${cands[*]}" -- "$cur"))
	[[ ${COMPREPLY-} == *[=,] ]] && compopt -o nospace
}
complete -F _gpup2p gpup2p
