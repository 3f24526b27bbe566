#!/bin/bash
# CLI error handling: documented exit codes and one-line messages for bad input.
set -u
BUILD=${BUILD:-build}
BIN=$BUILD/gpup2p
. tests/cli/lib.sh
FX=$BUILD/fixtures
export GPUP2P_PCI_IDS=$PWD/tests/fixtures/pci.ids NO_COLOR=1
unset GPUP2P_ROOT

expect 64 "unknown option '--bogus'" topo --bogus
expect 64 "unknown command 'frobnicate'" frobnicate
expect 64 "unknown option '--nope'" --nope topo
expect 64 "--match wants VENDOR:DEVICE" topo --match 10de
expect 64 "--match wants VENDOR:DEVICE" bar --match
expect 64 "--color takes auto, always or never" --color=sometimes topo
expect 64 "--all goes with --tree" --root "$FX/h200x2" topo --all
expect 64 "give the archive to write" snapshot
expect 64 "no command 'nope'" help nope
expect 69 "root /nonexistent-dir: No such file" --root /nonexistent-dir topo
expect 69 "is not a directory" --root /etc/passwd bar
expect 69 "has no sys/ directory" --root /usr/share topo
expect 3 "0000:01:00.0/vendor: No such file" --root "$FX/broken-vendor" topo
expect 3 "resource: malformed" --root "$FX/broken-resource" bar --json
GPUP2P_ROOT=/nonexistent-env-root expect 69 "nonexistent-env-root" topo

# --help and --version succeed and print to stdout
for a in "--help" "help topo" "help bar" "help snapshot" "topo --help" "bar -h" "--version"; do
	# shellcheck disable=SC2086
	out=$("$BIN" $a 2>/dev/null)
	[ $? -eq 0 ] && [ -n "$out" ] && echo "ok - gpup2p $a" || echo "not ok - gpup2p $a"
done
"$BIN" --version | grep -qE '^gpup2p [0-9]+\.[0-9]+\.[0-9]+$' && echo "ok - version format" || echo "not ok - version format"

# warnings go to stderr, not into the output; -q silences them
out=$("$BIN" --root "$FX/broken-optional" topo --json 2>/dev/null)
python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["devices"][0]["numa_node"] is None' "$out" &&
	echo "ok - malformed numa_node is null in JSON" || echo "not ok - malformed numa_node in JSON"
n=$("$BIN" --root "$FX/broken-optional" topo 2>&1 >/dev/null | grep -c warning)
[ "$n" -eq 2 ] && echo "ok - two warnings on stderr" || echo "not ok - $n warnings on stderr (want 2)"
n=$("$BIN" --root "$FX/broken-optional" -q topo 2>&1 >/dev/null | grep -c warning)
[ "$n" -eq 0 ] && echo "ok - -q silences warnings" || echo "not ok - -q left $n warnings"

# colour: never with NO_COLOR or a pipe, always on request
"$BIN" --root "$FX/seed4x2" topo | grep -q $'\033' && echo "not ok - colour in a pipe" || echo "ok - no colour in a pipe"
"$BIN" --root "$FX/seed4x2" --color=always topo | grep -q $'\033\[31mSYS' && echo "ok - --color=always colours SYS" ||
	echo "not ok - --color=always"
"$BIN" --root "$FX/seed4x2" --color=always topo --json | grep -q $'\033' && echo "not ok - colour in JSON" ||
	echo "ok - never colour in JSON"

# --match: ivshmem-like extra endpoints become GPUs
n=$("$BIN" --root "$FX/h200x2" topo --csv --no-header --match 1af4:1042 | grep -c ',gpu,')
[ "$n" -eq 4 ] && echo "ok - --match adds endpoints as GPUs" || echo "not ok - --match gave $n GPUs"
# --tree --all shows every function, --tree only GPU/NIC paths
a=$("$BIN" --root "$FX/h200x2" topo --tree --all | grep -c -- '-- 0000:')
b=$("$BIN" --root "$FX/h200x2" topo --tree | grep -c -- '-- 0000:')
[ "$a" -eq 8 ] && [ "$b" -eq 2 ] && echo "ok - --tree --all lists 8, --tree 2" || echo "not ok - tree counts $a/$b"
# bar --all lists every function
n=$("$BIN" --root "$FX/h200x2" bar --all --csv --no-header | wc -l)
[ "$n" -eq 8 ] && echo "ok - bar --all lists 8 functions" || echo "not ok - bar --all listed $n"
# closed stdout is an error, not silence
"$BIN" --root "$FX/dgx-h100" topo --json >/dev/full 2>/dev/null
[ $? -eq 2 ] && echo "ok - write error exits 2" || echo "not ok - write error not reported"

# the option tables: one message per rule kind, values in both spellings, the word printed made safe
expect 64 "--status and --disable exclude each other" enable --status --disable
expect 64 "--pinned and --pageable exclude each other" copy h2d --pinned --pageable
expect 64 "--force goes with --disable \(see" acs --force
expect 64 "--gpu wants a GPU number .*not 'x'" pin --gpu=x
expect 64 "--iters wants a whole number from 1 to 100000, not '0'" map --iters 0
expect 64 "--via takes map or cuda, not 'dma'" copy h2d --via=dma
expect 64 "--state needs a file name" acs --disable --state=
expect 64 "unknown option '--\\\\x1b\\[2J'" topo $'--\e[2J'
out=$("$BIN" --help 2>&1)
grep -q __complete <<<"$out" && echo "not ok - __complete listed in help" || echo "ok - __complete is not in help"
"$BIN" --root "$FX/seed4x2" --color always topo | grep -q $'\033\[31mSYS' && echo "ok - --color always (a separate value) colours SYS" ||
	echo "not ok - --color always as two words"

# rules on values and words, worded by the one checker (the default MODE all brings h2d and p2p)
expect 64 "--engine sm and --pageable exclude each other with h2d or d2h: SM copies need pinned" bench --sm --pageable
expect 64 "--engine sm and --p2p off exclude each other with p2p or bidir: SM copies between GPUs" bench p2p --engine=sm --p2p off
expect 64 "--op goes with p2p, bidir, one2all or all2one" bench d2d --op write
expect 64 "--min must not be above --max" bench rdma --min 1M --max 64K
expect 64 "no --csv: it prints text or --json" doctor --csv
expect 64 "--baseline and --json exclude each other: --baseline prints doctor --expect's format" --json report --baseline
expect 64 "no --jsonl: it prints text or --json" --jsonl doctor
GPUP2P_LIBCUDA=/nonexistent expect 64 "--to must not equal --gpu: d2d copies within one GPU" copy peer --gpu 1 --to 1
GPUP2P_LIBCUDA=/nonexistent expect 64 "--to must not equal --gpu" copy peer --to 0
# and what they let through: the rule stops at the option's value, the words given, what --pinned adds
for a in "bench h2d --sm --pinned --pageable" "bench p2p --sm --pageable" "bench --op read" "bench --engine both latency --seed 2" \
	"copy h2d --via cuda --numa 0" "bench --min 64K --max 64K"; do
	# shellcheck disable=SC2086
	GPUP2P_LIBCUDA=/nonexistent expect 69 "CUDA not available" $a
done
