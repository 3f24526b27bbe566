#!/bin/bash
# tests/device/oracle.sh without a GPU: on the real 4xH200 capture (tests/fixtures/h200x4-hgx), with
# a stand-in nvidia-smi on PATH that prints the capture's vendor/ files and gpup2p reading the
# capture's snapshot (GPUP2P_ROOT), the healthy machine gives 0 disagreements except p2p, which
# needs CUDA (offline doctor skips p2p.access: one line per pair says gpup2p gave no verdict); the
# p2p comparison agrees on the doctor --json captured live there. Planted differences (one topo
# cell, one link count, a counter, BAR1, ECC, persistence, a PCIe width, a p2p cell, a doctor
# finding) are each reported; no nvidia-smi exits 69 with one line.
set -u
BUILD=${BUILD:-build}
BIN=$PWD/$BUILD/gpup2p
. tests/cli/lib.sh
export NO_COLOR=1
CAP=tests/fixtures/h200x4-hgx
SRC=$BUILD/fixtures/h200x4-hgx/snapshot
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
[ -d "$SRC" ] || { nok "no snapshot under $SRC (make fixtures)"; exit 0; }
CMP="python3 tests/device/oracle_cmp.py"

# the capture's snapshot, its facts as today's writer records them on that machine: format 2,
# NVLink counters apart (0 as nvidia-smi nvlink -e shows there), ECC on with no error, clocks idle
# alone (0x1: vendor/q.txt shows every other clock event reason "Not Active")
cp -r "$SRC" "$T/root"
sed -i -e 's/^gpup2p-gpu-facts 1$/gpup2p-gpu-facts 2/' \
	-e 's/ nvlink_errors=[0-9]* nvlink_errors_rise=[0-9]*//' \
	-e 's/ name=/ arch=9 nvlink_replay=0 nvlink_replay_rise=0 nvlink_recovery=0 nvlink_recovery_rise=0 nvlink_crc_flit=0 nvlink_crc_flit_rise=0 ecc_unc_volatile=0 clk_reasons=1 name=/' \
	"$T/root/gpup2p/gpu-facts"
mkdir -p "$T/v" "$T/bin"
cp "$CAP"/vendor/*.txt "$T/v/"
cat >"$T/bin/nvidia-smi" <<EOF
#!/bin/bash
V=$T/v
case "\$*" in
-L) cat \$V/nvidia-smi-L.txt ;;
"topo -m") cat \$V/topo-m.txt ;;
"topo -p2p rw") cat \$V/topo-p2p-rw.txt ;;
"nvlink -s") cat \$V/nvlink-s.txt ;;
"nvlink -e") cat \$V/nvlink-e.txt ;;
-q) cat \$V/q.txt ;;
*) exit 0 ;;
esac
EOF
chmod +x "$T/bin/nvidia-smi"

# the list of the facts' keys in oracle_cmp.py is libcore/gpu/state.c's, in its order
a=$(grep -o '[KR]("[a-z_]*"' libcore/gpu/state.c | sed 's/.*"\(.*\)"/\1/' | tr '\n' ' ')
b=$(python3 -c 'import sys; sys.path.insert(0, "tests/device"); import oracle_cmp; print(" ".join(oracle_cmp.STATE_KEYS))')
[ "$a" = "$b " ] && ok "oracle_cmp's facts keys = state.c's" || nok "facts keys: state.c '$a', oracle_cmp '$b'"

# the whole script on the capture
run_oracle() {
	PATH=$T/bin:$PATH GPUP2P_ROOT=$T/root OUT=$T/out GPUP2P=$BIN bash tests/device/oracle.sh >"$T/log" 2>&1
}
run_oracle
rc=$?
dis=$(grep -c '^  ' "$T/log")
p2p=$(grep -c "^  p2p: GPU[0-3]->GPU[0-3]: gpup2p has no p2p.access verdict, nvidia-smi 'OK'" "$T/log")
[ $rc -eq 1 ] && [ "$dis" -eq 12 ] && [ "$p2p" -eq 12 ] && grep -q '^== 12 disagreement(s)' "$T/log" &&
	ok "oracle.sh on the capture: only p2p (no CUDA offline), one line per ordered pair" ||
	nok "oracle.sh on the capture: exit $rc, $dis lines: $(grep -v '^agree' "$T/log" | head -8 | tr '\n' ';')"
for c in topo nvlink q doctor; do
	grep -q "^agree    $c\$" "$T/log" && ok "oracle.sh: $c agrees on the healthy capture" ||
		nok "oracle.sh: $c: $(grep -A3 " $c\$" "$T/log" | tr '\n' ';')"
done
grep -q '^skip     bench' "$T/log" && ok "oracle.sh: no NVBANDWIDTH: bench skipped, said so" || nok "bench line"
[ -s "$T/out/oracle.log" ] && [ -s "$T/out/raw/smi-q.txt" ] && [ -s "$T/out/raw/doctor-snap.json" ] &&
	ok "oracle.sh: raw outputs and the log under OUT" || nok "oracle.sh: OUT: $(ls "$T/out" "$T/out/raw" | tr '\n' ' ')"
R=$T/out/raw
F=$R/snap/*/gpup2p/gpu-facts

# p2p on what doctor printed live on that machine
$CMP p2p "$CAP/gpup2p/doctor.json" "$T/v/topo-p2p-rw.txt" >"$T/d" && [ ! -s "$T/d" ] &&
	ok "p2p: doctor's live p2p.access = nvidia-smi topo -p2p rw" || nok "p2p: $(head -3 "$T/d")"

# planted: each difference is one line naming it
plant() { # WHAT WANT FILE SED [COMPARE ARGS]: edit a copy of FILE, the comparison says WANT, once
	local what=$1 want=$2 file=$3 ed=$4 n rc
	shift 4
	sed "$ed" "$file" >"$T/planted"
	"$@" >"$T/d" 2>&1
	rc=$?
	n=$(grep -c '' "$T/d")
	[ $rc -eq 1 ] && [ "$n" -eq 1 ] && grep -qF "$want" "$T/d" && ok "planted $what: reported" ||
		nok "planted $what: exit $rc, $n lines: $(head -3 "$T/d" | tr '\n' ';')"
}
P=$T/planted
plant "topo cell" "topo: GPU3 / GPU0: gpup2p 'NV18', nvidia-smi 'NV12'" "$R/smi-topo-m.txt" '5s/\tNV18\t/\tNV12\t/' \
	awk -f tests/device/topo_cells.awk "$R/topo.txt" "$P"
plant "p2p cell" "p2p: GPU1->GPU3: gpup2p yes, nvidia-smi topo -p2p rw 'CNS'" "$T/v/topo-p2p-rw.txt" \
	'/GPU1\tOK/s/\tOK\t$/\tCNS\t/' $CMP p2p "$CAP/gpup2p/doctor.json" "$P"
plant "link count" "nvlink: GPU1: gpup2p 18 links up, nvidia-smi nvlink -s 17" "$R/smi-nvlink-s.txt" \
	'/^GPU 1:/,/^GPU 2:/s/Link 7: 26.562 GB\/s/Link 7: <inactive>/' $CMP nvlink $F "$R/smi-q.txt" "$P" "$R/smi-nvlink-e.txt"
plant "replay counter" "nvlink: GPU3: Replay errors: gpup2p 0, nvidia-smi nvlink -e 4" "$R/smi-nvlink-e.txt" \
	'/^GPU 3:/,$s/Link 5: Replay Errors: 0/Link 5: Replay Errors: 4/' $CMP nvlink $F "$R/smi-q.txt" "$R/smi-nvlink-s.txt" "$P"
plant "BAR1" "q: GPU0: BAR1: gpup2p 262144 MiB, nvidia-smi 32768 MiB" "$R/smi-q.txt" \
	'0,/262144 MiB/s/262144 MiB/32768 MiB/' $CMP q $F "$R/topo.json" "$P"
plant "ECC" "q: GPU1: ECC: gpup2p count 0, nvidia-smi mode Disabled" "$R/smi-q.txt" \
	'/^GPU 00000000:00:07.0/,/^GPU 00000000:00:08.0/{/ECC Mode/,+1s/Enabled/Disabled/}' $CMP q $F "$R/topo.json" "$P"
plant "persistence" "q: GPU2: persistence: gpup2p Enabled, nvidia-smi Disabled" "$R/smi-q.txt" \
	'/^GPU 00000000:00:08.0/,/^GPU 00000000:00:09.0/s/Persistence Mode\( *\): Enabled/Persistence Mode\1: Disabled/' \
	$CMP q $F "$R/topo.json" "$P"
plant "PCIe width" "q: GPU3: PCIe Link Width/Current: gpup2p 16, nvidia-smi 8" "$R/smi-q.txt" \
	'/^GPU 00000000:00:09.0/,${/Link Width/,+2s/Current\( *\): 16x/Current\1: 8x/}' $CMP q $F "$R/topo.json" "$P"
plant "doctor finding" "doctor: driver.persistence 0000:00:07.0: live ok, on its snapshot warning" "$R/doctor-snap.json" \
	's/"severity": *"ok", *"subject": *"0000:00:07.0", *"bdf": *\["0000:00:07.0"\], *"message": *"GPU1: persistence mode on"/"severity": "warning", "subject": "0000:00:07.0", "bdf": ["0000:00:07.0"], "message": "GPU1: persistence mode on"/' \
	$CMP doctor "$R/doctor.json" "$P"

# bench figures: a ratio line each, below 1.00x a disagreement only when strict
# (latency paths, lat_*: ns, lower is better, the ratio nvbandwidth's over gpup2p's)
printf 'p2p_ce_write 390\np2p_ce_write 392\np2p_ce_write 391\nh2d_ce 57\nlat_p2p_sm 850\nlat_host_sm 1180\n' >"$T/a"
printf 'p2p_ce_write 396\np2p_ce_write 395\np2p_ce_write 397\nh2d_ce 55\nlat_p2p_sm 830\nlat_host_sm 1190\n' >"$T/b"
$CMP bench "$T/a" "$T/b" >"$T/d"
rc=$?
[ $rc -eq 0 ] && grep -q '^p2p_ce_write .* 391.0 .* 396.0 0.987x' "$T/d" && grep -q '^h2d_ce .* 1.036x' "$T/d" &&
	grep -q '^lat_p2p_sm .* 850.0 .* 830.0 0.976x' "$T/d" && grep -q '^lat_host_sm .* 1180.0 .* 1190.0 1.008x' "$T/d" &&
	ok "bench: medians and ratios printed (latency: nvbandwidth's over gpup2p's), below 1.00x only a figure" ||
	nok "bench: exit $rc: $(cat "$T/d")"
OR_STRICT_BENCH=1 $CMP bench "$T/a" "$T/b" >"$T/d"
[ $? -eq 1 ] && grep -q '^bench: p2p_ce_write: gpup2p 391.0 GB/s, nvbandwidth 396.0 (0.987x)' "$T/d" &&
	grep -q '^bench: lat_p2p_sm: gpup2p 850.0 ns, nvbandwidth 830.0 (0.976x)' "$T/d" &&
	! grep -q '^bench: h2d\|^bench: lat_host' "$T/d" && ok "bench: OR_STRICT_BENCH=1 counts a path below 1.00x" ||
	nok "strict: $(cat "$T/d")"

# bench offline: oracle_bench.sh on the test double (2 GPUs) with a stand-in nvbandwidth that prints a
# SUM line for every test it is asked for: every path of its map is measured by both (no "only" line),
# and the tests it asks nvbandwidth for are the bandwidth tests of gpup2p-bench(1)'s table
FAKE=$PWD/$BUILD/tests/fakecuda/libcuda.so.1
mkdir -p "$T/ob" "$T/obr"
printf '#!/bin/sh\n[ "$1" = -L ] && printf "GPU 0: Fake (UUID: GPU-0)\\nGPU 1: Fake (UUID: GPU-1)\\n"\n' >"$T/ob/nvidia-smi"
cat >"$T/ob/nvbandwidth" <<'EOF2'
#!/bin/bash
while [ $# -gt 0 ]; do case $1 in -t) shift; while [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; do
	echo "$1" >>"${0%/*}/asked"; echo "SUM $1 100.00"; shift; done ;; *) shift ;; esac; done
EOF2
chmod +x "$T/ob/nvidia-smi" "$T/ob/nvbandwidth"
PATH=$T/ob:$PATH GPUP2P_LIBCUDA=$FAKE FAKECUDA_GPUS=2 ROUNDS=1 SIZE_MIB=1 bash tests/device/oracle_bench.sh "$BIN" \
	"$T/ob/nvbandwidth" "$T/obr" >"$T/ob.out" 2>&1
rc=$?
paths=$(grep -c '^[a-z0-9_]\+ \+[0-9.]\+ \+[0-9.]\+ [0-9.]\+x$' "$T/ob.out")
man=$(sed -n '/^\.TS/,/^\.TE/p' man/gpup2p-bench.1 | awk -F'\t' 'NF == 2 && $1 ~ /^[a-z_]+$/ {
	print $1; if ($1 ~ /_ce$/) { sub(/_ce$/, "_sm", $1); print $1 } }' | sort -u)
asked=$(sort -u "$T/ob/asked" 2>/dev/null)
[ $rc -eq 0 ] && [ "$paths" -eq 35 ] && ! grep -q 'only$' "$T/ob.out" && [ -n "$man" ] && [ "$man" = "$asked" ] &&
	grep -q '"mode": "latency".*"size": 1048576' "$T/obr/bench-1.jsonl" &&
	ok "oracle_bench.sh offline: 35 paths (2 latencies, 1 MiB chains) measured by both; nvbandwidth asked for the man page's tests" ||
	nok "oracle_bench offline: exit $rc, $paths paths, man/asked differ: $(diff <(echo "$man") <(echo "$asked") | head -5 | tr '\n' ' ') $(grep -v '^SUM' "$T/ob.out" | head -5 | tr '\n' ';')"

# the map pairs each nvbandwidth test with the bench gpup2p-bench(1)'s table names for it: mode, op
# (peer modes: write unless --op read), --duplex, engine (_sm tests: --sm); rows of the table written
# for _sm tests win over the "_sm, the same" rule
mapd=$(PATH=$T/ob:$PATH OR_PRINT_MAP=1 bash tests/device/oracle_bench.sh "$BIN" x "$T/obr" |
	awk '{ op = $4; if ($2 ~ /^(h2d|d2h|all2host|host2all)$/) op = ($4 == "duplex" ? "duplex" : "-");
		print $6, $2, op, $3 }' | sort)
mant=$(sed -n '/^\.TS/,/^\.TE/p' man/gpup2p-bench.1 | sed 's/\\-/-/g' | awk -F'\t' '
	NF == 2 && $1 ~ /^[a-z_]+$/ {
		n = split($2, w, " "); mode = w[1]; op = "write"; dup = 0
		for (i = 2; i <= n; i++) { if (w[i] == "read") op = "read"; if (w[i] == "--duplex") dup = 1 }
		if (mode == "latency") op = w[n]
		if (mode ~ /^(h2d|d2h|all2host|host2all)$/) op = dup ? "duplex" : "-"
		if (mode == "d2d") op = "-"
		eng = ($1 ~ /_sm$/) ? "sm" : "ce"; t[$1] = mode " " op " " eng
		if ($1 ~ /_ce$/) { s = $1; sub(/_ce$/, "_sm", s); if (!(s in own)) t[s] = mode " " op " sm" }
		if ($1 ~ /_sm$/) own[$1] = 1 }
	END { for (k in t) print k, t[k] }' | sort)
[ -n "$mapd" ] && [ "$mapd" = "$mant" ] &&
	grep -qx 'one_to_all_read_ce all2one read ce' <<<"$mapd" && grep -qx 'one_to_all_read_sm all2one write sm' <<<"$mapd" &&
	ok "oracle_bench.sh's map is gpup2p-bench(1)'s table: each nvbandwidth test against its bench" ||
	nok "map and man table differ: $(diff <(echo "$mapd") <(echo "$mant") | head -6 | tr '\n' ' ')"

# no GPU: one line, 69
mkdir -p "$T/nogpu"
printf '#!/bin/sh\necho "No devices were found"\nexit 6\n' >"$T/nogpu/nvidia-smi"
chmod +x "$T/nogpu/nvidia-smi"
out=$(PATH=$T/nogpu:$PATH OUT=$T/out2 bash tests/device/oracle.sh 2>&1)
rc=$?
[ $rc -eq 69 ] && [ "$(grep -c '' <<<"$out")" -eq 1 ] && ok "oracle.sh: no GPU -> 69, one line" || nok "no GPU: exit $rc: $out"
out=$(PATH=/nonexistent OUT=$T/out2 /bin/bash tests/device/oracle.sh 2>&1)
rc=$?
[ $rc -eq 69 ] && [ "$(grep -c '' <<<"$out")" -eq 1 ] && ok "oracle.sh: no nvidia-smi -> 69, one line" || nok "no nvidia-smi: exit $rc: $out"
