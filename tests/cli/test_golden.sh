#!/bin/bash
# CLI golden tests: every output format of topo, bar and acs on every fixture equals the reviewed golden
# file (tests/cli/golden; only tests/cli/update-golden.sh --write changes them, never a test run); the
# golden files' key facts equal the fixture specs and, for the real capture, nvidia-smi's own output.
set -u
BUILD=${BUILD:-build}
BIN=$BUILD/gpup2p
export GPUP2P_PCI_IDS=$PWD/tests/fixtures/pci.ids NO_COLOR=1
. tests/cli/cases.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for fx in $FIXTURES; do
	fixture_cases "$fx"
	for c in "${FCASES[@]}"; do
		name=${c%%|*}
		args=${c#*|}
		# shellcheck disable=SC2086
		"$BIN" --root "$BUILD/fixtures/$fx" $args >"$tmp/raw" 2>"$tmp/err"
		rc=$?
		golden_norm <"$tmp/raw" >"$tmp/out"
		want=0
		[ -f "tests/cli/golden/$fx/$name.rc" ] && want=$(cat "tests/cli/golden/$fx/$name.rc")
		if [ $rc -ne "$want" ]; then
			echo "not ok - $fx $name: exit $rc, want $want"; cat "$tmp/err"; continue
		fi
		case $name in bar | bar-csv | bar-jsonl) cp "$tmp/out" "$tmp/$name" ;; esac
		if diff -u "tests/cli/golden/$fx/$name.out" "$tmp/out" >"$tmp/diff"; then
			echo "ok - $fx $name matches golden"
		else
			echo "not ok - $fx $name differs from golden"; head -20 "$tmp/diff"
		fi
		if [ -f "tests/cli/golden/$fx/$name.err" ]; then
			sed "s|$PWD/||g" "$tmp/err" | diff -q "tests/cli/golden/$fx/$name.err" - >/dev/null &&
				echo "ok - $fx $name stderr matches" || { echo "not ok - $fx $name stderr"; cat "$tmp/err"; }
		elif [ -s "$tmp/err" ]; then
			echo "not ok - $fx $name: unexpected stderr"; cat "$tmp/err"
		fi
		case $name in
		*-json)
			# the envelope: what ran, on what, and how it ended (the exit status this run had)
			python3 -c 'import json,sys
d=json.load(open(sys.argv[1])); g=d["gpup2p"]; cmd=sys.argv[3].split()
assert list(d)[:3]==["schema","command","gpup2p"] and list(d)[-2:]==["messages","exit_status"], list(d)
assert d["schema"]==1 and d["command"]==cmd[0] and g["argv"]==cmd and g["live"] is False, d
assert d["exit_status"]==int(sys.argv[2]) and g["root"]==sys.argv[4], d' "$tmp/raw" $rc "$args" \
				"$(cd "$BUILD/fixtures/$fx" && pwd -P)" &&
				echo "ok - $fx $name: JSON in the envelope" ||
				echo "not ok - $fx $name: not JSON, or no envelope";;
		*-jsonl)
			python3 -c 'import json,sys
assert all(list(r)[:2]==["schema","command"] and r["command"]==sys.argv[2]
	   for r in map(json.loads, open(sys.argv[1])))' "$tmp/out" "${args%% *}" 2>/dev/null &&
				echo "ok - $fx $name: every line is JSON, with schema and command" ||
				echo "not ok - $fx $name: bad JSON line";;
		esac
	done
	# one field list per record: every fact bar's table shows is in its CSV row and JSON lines record
	python3 tests/cli/bar_fields.py "$tmp/bar" "$tmp/bar-csv" "$tmp/bar-jsonl" |
		sed "s/^\(ok\|not ok\) - /&$fx bar: /"
done

# The golden files are output of the code they test: their key facts are checked independently, against
# the fixture specs and, for the real capture, nvidia-smi's own output (tests/cli/golden_facts.py).
python3 tests/cli/golden_facts.py tests/fixtures/specs tests/cli/golden $FIXTURES
# ... and that check can fail: a wrong code, aperture, ACS word or NVLink count planted in a copy is found
planted=(
	"seed4x2/topo-csv.out|s/,PIX,SYS,SYS$/,PXB,SYS,SYS/"
	"seed4x2/topo.out|s/PXB/PIX/"
	"workstation/bar-csv.out|1!s/,268435456,/,536870912,/"
	"workstation/acs-csv.out|2s/,0x001d,/,0x0011,/"
	"dgx-h100/topo-csv.out|s/,NODE,SYS,SYS,SYS,SYS$/,NODE,SYS,SYS,SYS,NODE/"
	"h200x2/topo.out|s/NV18/NV12/"
	"h200x2/bar-csv.out|2s/,274877906944,/,268435456,/"
)
for p in "${planted[@]}"; do
	f=${p%%|*} fx=${f%%/*}
	rm -rf "$tmp/gold" && mkdir -p "$tmp/gold" && cp -r "tests/cli/golden/$fx" "$tmp/gold/"
	sed -i "${p#*|}" "$tmp/gold/$f"
	if cmp -s "$tmp/gold/$f" "tests/cli/golden/$f"; then
		echo "not ok - planted error in $f: the edit '${p#*|}' changed nothing"
	elif python3 tests/cli/golden_facts.py tests/fixtures/specs "$tmp/gold" "$fx" >"$tmp/facts"; [ $? -eq 1 ] &&
		grep -q '^not ok' "$tmp/facts"; then
		echo "ok - a planted error in $f is found"
	else
		echo "not ok - a planted error in $f passes the facts check"
	fi
done
