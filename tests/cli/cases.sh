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
