#!/bin/bash
# gpup2p copy and bench end to end without a GPU, over the libcuda test double (tests/fakecuda): formats,
# numbers derived from the double's clock model, verification failures, CUDA errors, thresholds, exit
# codes, usage errors, and the machine without CUDA.
set -u
BUILD=${BUILD:-build}
BIN=$PWD/$BUILD/gpup2p
. tests/cli/lib.sh
FAKE=$PWD/$BUILD/tests/fakecuda/libcuda.so.1
export GPUP2P_PCI_IDS=$PWD/tests/fixtures/pci.ids NO_COLOR=1 GPUP2P_LIBCUDA=$FAKE
unset GPUP2P_ROOT FAKECUDA_GPUS FAKECUDA_NOPEER FAKECUDA_CORRUPT FAKECUDA_FAIL
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
py() { python3 -c "$1" "${@:2}"; }


[ -f "$FAKE" ] || { nok "test double $FAKE not built"; exit 0; }

# bandwidth = bytes / (bytes / rate + 2 us per copy), the double's model
"$BIN" copy h2d --size 1M --iters 4 --json >"$T/c.json"; rc=$?
py 'import json,sys
d=json.load(open(sys.argv[1])); r=d["results"][0]; n=1<<20
want=round(n/(n/25e9+2e-6)/1e9,2)
assert r["gbps"]==want and r["verified"] is True and r["reps"]==4 and r["memory"]=="pinned", (r, want)
assert d["schema"]==1 and d["units"]["bandwidth"].startswith("GB/s") and len(d["gpus"])==2' "$T/c.json" &&
	[ $rc -eq 0 ] && ok "copy h2d: GB/s from the clock model, verified, JSON header" || nok "copy h2d JSON: rc=$rc $(cat "$T/c.json")"
py 'import json,sys; g=json.load(open(sys.argv[1]))["gpus"]; assert [x["bdf"] for x in g]==["0000:10:00.0","0000:20:00.0"], g' "$T/c.json" &&
	ok "GPUs in PCI bus order although CUDA lists them the other way" || nok "GPU order"

out=$("$BIN" copy --all-pairs --size 64K --iters 3 --csv --no-header); rc=$?
[ $rc -eq 0 ] && [ "$(grep -c ',true,' <<<"$out")" = 2 ] && grep -q '^peer,peer,GPU0,GPU1,,on,write,65536,3,3,' <<<"$out" &&
	ok "copy --all-pairs: both directions, peer access on, verified" || nok "all-pairs: rc=$rc $out"
out=$(FAKECUDA_NOPEER=1 "$BIN" copy --all-pairs --size 64K --iters 2 --jsonl); rc=$?
[ $rc -eq 0 ] && [ "$(grep -c '"p2p": *"off"' <<<"$out")" = 2 ] && ok "no peer access: pairs copied staged (p2p off), still checked" ||
	nok "all-pairs without peer: rc=$rc $out"
for p in "h2d --pageable" "d2h" "d2h --pageable" "d2d" "peer --gpu 1 --to 0"; do
	"$BIN" copy $p --size 100003 --iters 3 -q >/dev/null; rc=$?
	[ $rc -eq 0 ] && ok "copy $p, odd size: exit 0" || nok "copy $p: exit $rc"
done

# wrong data: exit 2, first bad byte with expected and found values
for k in h2d d2h d2d peer; do
	path=$k; [ $k = peer ] && path="peer --gpu 0 --to 1"
	err=$(FAKECUDA_CORRUPT=$k "$BIN" copy $path --size 8K --iters 2 2>&1 >"$T/o.txt"); rc=$?
	[ $rc -eq 2 ] && grep -qE "data wrong at byte 4097 of copy 1: expected 0x[0-9a-f]{2}, got 0x[0-9a-f]{2}" <<<"$err" &&
		grep -q "WRONG DATA" "$T/o.txt" && ok "copy $k with a corrupted byte: exit 2 naming byte 4097" ||
		nok "corrupt $k: rc=$rc $err"
done
err=$(FAKECUDA_CORRUPT=peer "$BIN" bench bidir --size 8K --iters 2 --reps 2 --p2p on 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && grep -q "data wrong at byte 4097 after the timed copies" <<<"$err" && ok "bench bidir, corrupted: exit 2" ||
	nok "bench corrupt: rc=$rc $err"
# the data is checked once per path, after the timed copies (never between them): the first row
# (GPU0 -> GPU1 write, --iters 1) makes peer copies 1 (warm-up) and 2, 3, 4 (repetitions 1-3); the last
# one wrong is found and named, exit 2
err=$(FAKECUDA_CORRUPT=peer FAKECUDA_CORRUPT_NTH=4 "$BIN" bench p2p --p2p on --size 8K --iters 1 --reps 3 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && [ "$err" = "gpup2p: p2p GPU0->GPU1: data wrong at byte 4097 after the timed copies: $(
	sed -n 's/.*\(expected .*\)/\1/p' <<<"$err")" ] && ok "bench: the last timed copy wrong: found after the timed copies, exit 2" ||
	nok "bench, peer copy 4 corrupted: rc=$rc $err"

# CUDA errors are named; no GPU and no libcuda are 69
FAKECUDA_FAIL=cuMemAlloc_v2 expect 2 "cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY" copy d2d --size 4K
FAKECUDA_GPUS=0 expect 69 "no GPU" bench
GPUP2P_LIBCUDA=/nonexistent/libcuda.so.1 expect 69 "CUDA not available" copy h2d
FAKECUDA_GPUS=1 expect 64 "a peer copy needs two GPUs; CUDA sees 1" copy peer
# one GPU, --all-pairs: no pair to copy between; says so, checks copies within the GPU, exit 0
out=$(FAKECUDA_GPUS=1 "$BIN" copy --all-pairs --size 64K --iters 2 --csv --no-header 2>"$T/e"); rc=$?
[ $rc -eq 0 ] && [ "$(grep -c '' <<<"$out")" = 1 ] && grep -q '^d2d,d2d,GPU0,GPU0,.*,true,' <<<"$out" &&
	grep -q "CUDA sees one GPU, so there are no pairs" "$T/e" &&
	ok "copy --all-pairs on one GPU: no pairs, says so, d2d within it checked, exit 0" || nok "all-pairs, 1 GPU: rc=$rc $out $(cat "$T/e")"
err=$(FAKECUDA_GPUS=1 FAKECUDA_CORRUPT=d2d "$BIN" copy --all-pairs --size 8K --iters 2 -q 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && grep -q "d2d GPU0->GPU0: data wrong at byte 4097" <<<"$err" && ! grep -q "no pairs" <<<"$err" &&
	ok "copy --all-pairs on one GPU, corrupted: exit 2 (-q: no note)" || nok "all-pairs, 1 GPU, corrupt: rc=$rc $err"
expect 64 "no GPU7: CUDA sees 2 GPU" copy h2d --gpu 7
expect 64 "no GPU3: CUDA sees 2 GPU" bench --gpu 3

# usage errors (before CUDA is touched)
expect 64 "give h2d, d2h, d2d, peer or --all-pairs" copy
expect 64 "unknown path 'sideways'" copy sideways
expect 64 "--all-pairs and h2d exclude each other" copy h2d --all-pairs
expect 64 "--pinned and --pageable exclude" copy h2d --pinned --pageable
expect 64 "--pinned goes with h2d or d2h" copy peer --pinned
expect 64 "--to goes with peer" copy h2d --to 1
expect 64 "--size wants a size like" copy h2d --size 12Q
expect 64 "--size 4T is too large" bench --size 4T
expect 64 "--iters wants a whole number from 1" copy h2d --iters 0
expect 64 "--gpu wants a GPU number" copy h2d --gpu -1
expect 64 "unknown mode 'fast'" bench fast
expect 64 "unknown option '--bogus'" bench --bogus
expect 64 "--size and --min exclude each other" bench --size 1M --min 1K --max 2K
expect 64 "--min goes with --max" bench --min 1K
expect 64 "--factor goes with --min" bench --factor 2
expect 64 "--factor wants a number above 1" bench --min 1K --max 8K --factor 1
expect 64 "--min must not be above --max" bench --min 8K --max 1K
expect 64 "--min-bw wants GBPS or MODE=GBPS" bench --min-bw latency=5
expect 64 "--p2p takes on, off or both" bench --p2p maybe
expect 64 "--gpu 1 given twice" bench --gpu 1 --gpu 1
expect 64 "--numa wants a NUMA node" bench --numa x

# bench: every format, row counts, nulls for what was not measured
"$BIN" bench --size 64K --iters 2 --reps 3 --json >"$T/b.json"; rc=$?
py 'import json,sys
d=json.load(open(sys.argv[1])); r=d["results"]
modes=[x["mode"] for x in r]
assert modes.count("h2d")==4 and modes.count("d2h")==4 and modes.count("d2d")==2 and modes.count("p2p")==8 and modes.count("bidir")==2 and modes.count("latency")==6, modes
for x in r:
    assert x["verified"] is True and x["skipped"] is None and x["engine"]=="ce", x
    if x["mode"]=="latency": assert x["gbps"] is None and x["us"]>0 and x["host_us"]>0 and x["size"]==4, x
    else: assert x["gbps"]>0 and x["host_us"] is None, x
n=65536
bd=[x for x in r if x["mode"]=="bidir" and x["p2p"]=="on"][0]
assert bd["gbps"]==round(2*n/(n/300e9+2e-6)/1e9,2), bd
off=[x for x in r if x["mode"]=="p2p" and x["p2p"]=="off"][0]
assert off["gbps"]==round(n/(n/20e9+2e-6)/1e9,2) and off["gated"] is False, off
pg=[x for x in r if x["mode"]=="h2d" and x["memory"]=="pageable"][0]
assert pg["gbps"]==round(n/(n/12.5e9+2e-6)/1e9,2) and pg["gated"] is False, pg' "$T/b.json" && [ $rc -eq 0 ] &&
	ok "bench all --json: 26 rows, numbers from the clock model, bidir counts both directions, latency rows" ||
	nok "bench json: rc=$rc"
"$BIN" bench --size 64K --iters 2 --reps 3 --csv >"$T/b.csv"
[ "$(($(wc -l <"$T/b.csv") - 1))" = 26 ] && head -1 "$T/b.csv" | grep -q '^mode,path,src,dst,memory,p2p,op,size,iters,reps,gbps,' &&
	ok "bench --csv: header and 26 rows" || nok "bench csv: $(head -3 "$T/b.csv")"
"$BIN" bench --size 64K --iters 2 --reps 3 --csv --no-header | head -1 | grep -q '^h2d,h2d,host,GPU0,pinned,,,65536,2,3,' &&
	ok "bench --csv --no-header: data from the first line" || nok "csv --no-header"
"$BIN" bench --size 64K --iters 2 --reps 3 --jsonl >"$T/b.jsonl"
py 'import json,sys
rows=[json.loads(l) for l in open(sys.argv[1])]
assert len(rows)==26 and all(r["schema"]==1 for r in rows)' "$T/b.jsonl" && ok "bench --jsonl: 26 objects, schema in each" ||
	nok "bench jsonl"
out=$(FAKECUDA_NOPEER=1 "$BIN" bench p2p bidir latency --size 64K --iters 2 --reps 2 --json); rc=$?
py 'import json,sys
r=json.loads(sys.argv[1])["results"]
sk=[x for x in r if x["skipped"]]
assert len(sk)==4+1+2 and all(x["gbps"] is None and x["verified"] is None for x in sk), sk' "$out" && [ $rc -eq 0 ] &&
	ok "no peer access: p2p-on rows kept with null numbers and the reason" || nok "skipped rows: rc=$rc"
out=$("$BIN" bench h2d --pinned --min 4K --max 1M --factor 4 --csv --no-header); rc=$?
[ $rc -eq 0 ] && [ "$(cut -d, -f8 <<<"$out" | sort -un | tr '\n' ' ')" = "4096 16384 65536 262144 1048576 " ] &&
	ok "sweep 4K..1M x4: 5 sizes per GPU" || nok "sweep: rc=$rc $out"
out=$("$BIN" bench latency --size 64 --iters 100 --csv --no-header); rc=$?
[ $rc -eq 0 ] && [ "$(cut -d, -f8 <<<"$out" | sort -u)" = 64 ] && [ "$(cut -d, -f9 <<<"$out" | sort -u)" = 100 ] &&
	ok "latency alone: --size and --iters apply to it" || nok "latency options: $out"

# thresholds: exit 1 below, 0 above; per mode
"$BIN" bench h2d --pinned --size 1M --iters 2 --reps 2 --min-bw 30 -q >/dev/null 2>&1; rc=$?
[ $rc -eq 1 ] && ok "--min-bw 30 with 23.9 GB/s: exit 1" || nok "--min-bw 30: exit $rc"
# the JSON envelope says how the run ended, as the exit status does: 1 below a floor, 2 a wrong byte
"$BIN" bench h2d --pinned --size 1M --iters 2 --reps 2 --min-bw 30 --json >"$T/env.json" 2>/dev/null; rc=$?
py 'import json,sys
d=json.load(open(sys.argv[1])); g=d["gpup2p"]
assert d["command"]=="bench" and d["exit_status"]==1 and d["messages"]==[] and g["root"] is None, d
assert g["argv"]==["bench","h2d","--pinned","--size","1M","--iters","2","--reps","2","--min-bw","30","--json"], g' \
	"$T/env.json" && [ $rc -eq 1 ] && ok "bench --json below --min-bw: envelope, exit_status 1" ||
	nok "bench envelope: rc=$rc"
FAKECUDA_CORRUPT=h2d "$BIN" copy h2d --size 8K --iters 2 --json >"$T/env.json" 2>/dev/null; rc=$?
py 'import json,sys; d=json.load(open(sys.argv[1])); assert d["command"]=="copy" and d["exit_status"]==2, d' \
	"$T/env.json" && [ $rc -eq 2 ] && ok "copy --json with a wrong byte: exit_status 2" ||
	nok "copy envelope: rc=$rc"
"$BIN" copy h2d --size 8K --iters 2 --jsonl | py 'import json,sys
r=[json.loads(l) for l in sys.stdin]; assert r and all(x["schema"]==1 and x["command"]=="copy" for x in r), r' &&
	ok "copy --jsonl: schema and command in each line" || nok "copy --jsonl lines"
err=$("$BIN" bench h2d --pinned --size 1M --iters 2 --reps 2 --min-bw h2d=30 2>&1 >/dev/null)
grep -q "h2d host->GPU0 pinned: 23.9 GB/s is below --min-bw 30.0" <<<"$err" && ok "below --min-bw: one line per result" ||
	nok "below message: $err"
"$BIN" bench h2d --pinned --size 1M --iters 2 --reps 2 --min-bw 20 --min-bw d2h=500 -q >/dev/null; rc=$?
[ $rc -eq 0 ] && ok "--min-bw 20 with a d2h-only floor on an h2d run: exit 0" || nok "thresholds: exit $rc"
"$BIN" bench h2d --pinned --size 1M --iters 2 --reps 2 --min-bw 30 --json 2>/dev/null | py 'import json,sys
r=json.load(sys.stdin)["results"]; assert all(x["below_min"] and x["min_gbps"]==30 for x in r)' &&
	ok "JSON marks below_min with the floor" || nok "below_min in JSON"
"$BIN" bench h2d --pinned --size 64K --iters 2 --reps 2 --no-verify --json | py 'import json,sys
r=json.load(sys.stdin)["results"]; assert all(x["verified"] is None for x in r)' && ok "--no-verify: verified is null" ||
	nok "--no-verify"
"$BIN" bench h2d --size 64K --iters 2 --reps 2 >"$T/t.txt"; rc=$?
[ $rc -eq 0 ] && grep -q "^MODE  *SRC  *DST  *MEMORY" "$T/t.txt" && grep -q "GB/s = 1e9 bytes/s" "$T/t.txt" &&
	ok "table with header and units" || nok "table: $(cat "$T/t.txt")"

# pin and map without gpup2p.ko here: the error says how to load it; usage errors before anything
GPUP2P_DEVICE=/nonexistent/gpup2p expect 69 "gpup2p.ko is not loaded: run 'gpup2p enable'" map
GPUP2P_DEVICE=/nonexistent/gpup2p expect 69 "gpup2p.ko is not loaded" pin --size 1M
GPUP2P_DEVICE=/dev/null expect 69 "version handshake failed" pin
expect 64 "--offset must be a multiple of 4K" map --offset 5000
expect 64 "--isa takes memcpy, sse4.1, avx2, avx512 or movdir64b" map --isa mmx
expect 64 "unknown option '--offset'" pin --offset 4K
expect 64 "unknown option '--persistent'" map --persistent
GPUP2P_LIBCUDA=/nonexistent/libcuda.so.1 expect 69 "CUDA not available" map
expect 64 "--via map goes with h2d or d2h" copy peer --via map
expect 64 "--via takes map or cuda" copy h2d --via dma
expect 64 "--via map and --pageable exclude each other: map copies from the CPU's own buffer" copy h2d --via map --pageable
GPUP2P_DEVICE=/nonexistent/gpup2p expect 69 "no pin backend: .*gpup2p.ko is not loaded" copy d2h --via map -q

# the table repeats p2p as matrices (row: source, column: destination). Every direction has its own
# rate in the double (FAKECUDA_PEER_GBPS names CUDA ordinals; CUDA lists GPUs in reverse bus order, so
# GPU0 = CUDA 2, GPU1 = CUDA 1, GPU2 = CUDA 0): a transposed or misplaced cell cannot pass.
declare -A rate=([0,1]=100 [1,0]=200 [0,2]=50 [2,0]=400 [1,2]=150 [2,1]=250)
spec=
for k in "${!rate[@]}"; do spec+="${spec:+,}$((2 - ${k%,*})):$((2 - ${k#*,}))=${rate[$k]}"; done
# the double's clock: 1M / (1M / rate + 2 us) per copy
cell() { awk -v r="$1" -v f="$2" 'BEGIN { n = 1048576; printf f, n / (n / (r * 1e9) + 2e-6) / 1e9 }'; }
export FAKECUDA_GPUS=3 FAKECUDA_PEER_GBPS=$spec
out=$("$BIN" bench p2p --size 1M --iters 2 --reps 2 --p2p on); rc=$?
csv=$("$BIN" bench p2p --size 1M --iters 2 --reps 2 --p2p on --csv --no-header)
unset FAKECUDA_GPUS FAKECUDA_PEER_GBPS
for op in write read; do
	want=
	for a in 0 1 2; do
		want+="GPU$a"
		for b in 0 1 2; do [ $a = $b ] && want+=" -" || want+=" $(cell "${rate[$a,$b]}" %.1f)"; done
		want+=$'\n'
	done
	got=$(grep -A4 "^P2P $op, peer access on, 1M per copy" <<<"$out" | sed -n '3,5p' | awk '{ $1 = $1; print }')
	[ $rc -eq 0 ] && [ "$got"$'\n' = "$want" ] && ok "bench p2p $op matrix: each cell is its own direction's rate" ||
		nok "p2p $op matrix: want $want got $got"
done
bad=0
for a in 0 1 2; do
	for b in 0 1 2; do
		[ $a = $b ] && continue
		g=$(awk -F, -v s="GPU$a" -v d="GPU$b" '$3 == s && $4 == d && $7 == "write" { print $11 }' <<<"$csv")
		[ "$g" = "$(cell "${rate[$a,$b]}" %.2f)" ] || { bad=1; echo "# GPU$a -> GPU$b: $g, want $(cell "${rate[$a,$b]}" %.2f)"; }
	done
done
[ $bad = 0 ] && ok "bench p2p --csv: every direction's row has its own rate" || nok "p2p csv rows: $csv"

# enable --status without the module asks CUDA whether the dma-buf backend works
out=$(GPUP2P_DEVICE=/nonexistent "$BIN" enable --status --json); rc=$?
py 'import json,sys; d=json.loads(sys.argv[1]); assert d["pin_backend"] is None and "dma-buf: this driver cannot export" in d["pin_backend_detail"], d' "$out" &&
	[ $rc -eq 0 ] && ok "enable --status: no backend, with the kmod and the dma-buf reasons" || nok "status dmabuf: $out"

# more than 64 GPUs: every one numbered (the double puts CUDA device d of 70 at bus 70 - d)
out=$(FAKECUDA_GPUS=70 "$BIN" copy peer --gpu 69 --to 64 --size 64K --iters 2 --json); rc=$?
py 'import json,sys; d=json.loads(sys.argv[1]); g=d["gpus"]; r=d["results"][0]
assert len(g)==70 and [x["bdf"] for x in g]==["0000:%02x:00.0" % (i+1) for i in range(70)], g
assert g[69]["name"]=="Fake GPU 0" and g[64]["name"]=="Fake GPU 5", g
assert (r["src"], r["dst"], r["verified"])==("GPU69", "GPU64", True), r' "$out" && [ $rc -eq 0 ] &&
	ok "70 GPUs: all listed in bus order, copy GPU69 -> GPU64 verified" || nok "70 GPUs copy: rc=$rc $out"
out=$(FAKECUDA_GPUS=70 "$BIN" bench p2p --gpu 66 --gpu 69 --size 4K --iters 1 --reps 1 --p2p on --csv --no-header); rc=$?
[ $rc -eq 0 ] && [ "$(grep -c '^p2p,p2p,GPU6[69],GPU6[69],.*,true,' <<<"$out")" = 4 ] &&
	ok "70 GPUs: bench --gpu 66 --gpu 69 measures both directions, read and write" || nok "70 GPUs bench: rc=$rc $out"
# --duplex h2d (host_to_device_bidirectional): a d2h of twice the copies runs on the same GPU at the same
# time; with one host link of 30 GB/s (L = n / 30 GB/s, each copy's own time 2 us + n / 25 GB/s < 2L)
# the turns go h2d, d2h, d2h, h2d: the second h2d ends at 4L, 2 n / 4L = 15 GB/s, where h2d alone is 30
out=$(FAKECUDA_GPUS=1 FAKECUDA_HOST_GBPS=30 "$BIN" bench h2d --pinned --duplex --size 1M --iters 2 --reps 2 --csv --no-header); rc=$?
[ $rc -eq 0 ] && grep -q '^h2d,h2d,host,GPU0,pinned,,duplex,1048576,2,2,15.00,' <<<"$out" &&
	ok "h2d --duplex, host link 30 GB/s: op duplex, 15.00 GB/s (the d2h shares the link)" || nok "h2d duplex: rc=$rc $out"
# --duplex --sm (host_to_device_bidirectional_memcpy_sm, device_to_host_...): one kernel per copy,
# gp_copy_duplex, its even warps copying one way and its odd warps the other; the figure is the mean of
# the two directions, both ways' bytes over the window's time / 2 (nvbandwidth's): computed here from
# the double's own timed windows (FAKECUDA_WINDOWS, those of 2 copies), 1 MiB x 2 copies / 2 / ms
rm -f "$T/m" "$T/w"
out=$(FAKECUDA_GPUS=1 FAKECUDA_MARKER="$T/m" FAKECUDA_WINDOWS="$T/w" "$BIN" bench h2d d2h --pinned --duplex --sm --size 1M \
	--iters 2 --reps 2 --jsonl); rc=$?
py 'import json,statistics,sys
r=[json.loads(l) for l in sys.argv[1].splitlines()]
ms=[float(l.split()[0][3:]) for l in open(sys.argv[2]) if " copies=2 " in l]
assert len(r)==2 and len(ms)==4 and all(x["op"]=="duplex" and x["engine"]=="sm" and x["verified"] for x in r), (r, ms)
for x, w in zip(r, (ms[:2], ms[2:])):
    want=statistics.median([1048576*2/2/(m*1e-3)/1e9 for m in w])
    assert abs(x["gbps"]-want) < 0.01, (x["gbps"], want)
m=open(sys.argv[3]).read().split()
assert m.count("gp_copy_duplex")==10 and "gp_copy16" not in m, m' "$out" "$T/w" "$T/m" && [ $rc -eq 0 ] &&
	ok "h2d/d2h --duplex --sm: one split-warp kernel a copy, the figure both ways' bytes / time / 2" ||
	nok "duplex sm: rc=$rc $out $(cat "$T/w")"
# both buffers checked: a byte wrong in either direction's copy, or the odd stripes (GPU to host) never
# copied, is caught and named by its direction
for c in "duplex 4097 host->GPU0" "duplexback 4609 GPU0->host" "duplexhalf 512 GPU0->host"; do
	read -r kind at dir <<<"$c"
	err=$(FAKECUDA_GPUS=1 FAKECUDA_CORRUPT=$kind "$BIN" bench h2d --pinned --duplex --sm --size 1M --iters 2 --reps 2 -q 2>&1 \
		>/dev/null); rc=$?
	[ $rc -eq 2 ] && grep -q "^gpup2p: h2d $dir: data wrong at byte $at after the timed copies" <<<"$err" &&
		ok "h2d --duplex --sm, FAKECUDA_CORRUPT=$kind: exit 2, $dir wrong at byte $at" || nok "duplex sm $kind: rc=$rc $err"
done
out=$(FAKECUDA_GPUS=2 "$BIN" bench bidir --op read --engine both --p2p on --size 64K --iters 1 --reps 2 --csv --no-header); rc=$?
[ $rc -eq 0 ] && [ "$(grep -c '^bidir,bidir,GPU0,GPU1,,on,read,65536,.*,true,' <<<"$out")" = 2 ] && ! grep -q ',write,' <<<"$out" &&
	ok "bidir --op read (device_to_device_bidirectional read): read rows, both engines" || nok "bidir read: rc=$rc $out"
out=$(FAKECUDA_GPUS=2 "$BIN" bench p2p --op write --p2p on --size 64K --iters 1 --reps 2 --csv --no-header); rc=$?
[ $rc -eq 0 ] && [ "$(grep -c ',write,' <<<"$out")" = 2 ] && ! grep -q ',read,' <<<"$out" &&
	ok "p2p --op write: write rows only" || nok "p2p write: rc=$rc $out"
# bus ids in domains c05b and 10000 (Intel VMD), upper case, on the vmd fixture: numeric PCI order (as
# strings 10000 would sort first), each GPU's NUMA node and link from its own function (vmd.spec)
out=$(FAKECUDA_GPUS=3 FAKECUDA_BUSIDS="10000:E5:00.0,C05B:00:00.0,0000:01:00.0" "$BIN" --root "$BUILD/fixtures/vmd" \
	copy h2d --size 64K --iters 2 --json); rc=$?
py 'import json,sys; d=json.loads(sys.argv[1]); g=[(x["bdf"], x["name"], x["numa_node"], x["link_gen"], x["link_width"]) for x in d["gpus"]]
assert g==[("0000:01:00.0", "Fake GPU 2", 0, 5, 16), ("c05b:00:00.0", "Fake GPU 1", 1, 4, 4),
	("10000:e5:00.0", "Fake GPU 0", 0, 5, 16)], g
assert d["results"][0]["verified"] is True, d["results"]' "$out" && [ $rc -eq 0 ] &&
	ok "VMD domains: GPUs in numeric bus order, each with its own function's NUMA node and link" || nok "VMD bus ids: rc=$rc $out"

# bench --jsonl into report as srun --label delivers it: a task number names no host, so each row
# carries this machine's name (README's `srun -N64 --label gpup2p bench p2p --jsonl | gpup2p report`)
out=$("$BIN" bench p2p --jsonl --size 1M --iters 2 --reps 2 2>&1); rc=$?
rep=$(sed 's/^/0: /' <<<"$out" | "$BIN" report --csv 2>&1); rrc=$?
h=$(hostname)
[ $rc -eq 0 ] && [ "$(grep -c "\"host\": \"$h\"" <<<"$out")" = "$(grep -c '"mode"' <<<"$out")" ] &&
	[ $rrc -eq 0 ] && ! grep -q malformed <<<"$rep" && [ "$(grep -c ',p2p,' <<<"$rep")" -ge 4 ] &&
	ok "bench --jsonl rows name the host: srun-style numeric labels fold in report" ||
	nok "bench rows through numeric labels: rc=$rc/$rrc $rep"
