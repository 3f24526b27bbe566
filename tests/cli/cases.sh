# The golden cases: fixture, name, arguments. Sourced by test_golden.sh and update-golden.sh.
FIXTURES="h200x2 dgx-h100 seed4x2 epyc6 workstation nonroot broken-optional sriov"
CASES=(
	"topo|topo"
	"topo-tree|topo --tree"
	"topo-json|topo --json"
	"topo-csv|topo --csv"
	"topo-jsonl|topo --jsonl"
	"bar|bar"
	"bar-json|bar --json"
	"bar-csv|bar --csv"
	"bar-jsonl|bar --jsonl"
	"acs|acs"
	"acs-json|acs --json"
	"acs-csv|acs --csv"
	"acs-jsonl|acs --jsonl"
	"acs-disable-dry|acs --disable --dry-run"
	"acs-disable-all-dry-csv|acs --disable --all --mode zero --dry-run --csv"
)
# cases for one fixture only: "fixture|name|arguments" (doctor prints its root: the repository's path is
# taken out of the output)
FXCASES=(
	"sriov|doctor-pcie-links|doctor -v --only pcie.link_width,pcie.link_speed"
	# a PF and its VFs alike: one row, "0000:04:00.0 (NIC0+6VFs)", and one evidence line where theirs agree
	"sriov|doctor-vfs|doctor -v --only pcie.relaxed_ordering,nic.driver,bar.unassigned,rdma.port"
)
# fixture_cases FX: CASES and FX's own cases, as "name|arguments", into FCASES
fixture_cases() {
	local c
	FCASES=("${CASES[@]}")
	for c in "${FXCASES[@]}"; do
		if [ "${c%%|*}" = "$1" ]; then FCASES+=("${c#*|}"); fi
	done
}

# The JSON envelope names the root (an absolute path) and gpup2p's version: the golden files hold them as
# "fixtures/NAME" and "VERSION", so they hold on any checkout and across releases; doctor's text names
# its root too (the repository's path taken out). stdin to stdout.
golden_norm() {
	sed -e "s|\"$(cd "$BUILD/fixtures" && pwd -P)/|\"fixtures/|" \
		-e "s|\"version\": \"$(cat VERSION)\"|\"version\": \"VERSION\"|" -e "s|$PWD/||g"
}
