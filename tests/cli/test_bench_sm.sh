#!/bin/bash
# gpup2p bench with the GPU's own cores (--engine sm / --sm) end to end without a GPU: the libcuda test
# double (tests/fakecuda) loads the PTX module, knows its kernels by name and runs them on the host with
# its virtual clock (SM copies: 3 us + bytes at h2d 27, d2h 28, local 1500, peer 350 GB/s; chases:
# 1000 ns per load in host memory, 700 in a peer's). Numbers derived from that model, data checks,
# wrong data and a wrong chase (exit 2), usage errors (64).
set -u
BUILD=${BUILD:-build}
BIN=$PWD/$BUILD/gpup2p
. tests/cli/lib.sh
FAKE=$PWD/$BUILD/tests/fakecuda/libcuda.so.1
export GPUP2P_PCI_IDS=$PWD/tests/fixtures/pci.ids NO_COLOR=1 GPUP2P_LIBCUDA=$FAKE
unset GPUP2P_ROOT FAKECUDA_GPUS FAKECUDA_NOPEER FAKECUDA_CORRUPT FAKECUDA_FAIL FAKECUDA_L2 FAKECUDA_BADPTX FAKECUDA_SMS \
	FAKECUDA_CC FAKECUDA_MARKER
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
py() { python3 -c "$1" "${@:2}"; }
[ -f "$FAKE" ] || { nok "test double $FAKE not built"; exit 0; }

# a batch of 3 copies is one kernel of 3 passes: bandwidth = 3 n / (3 n / rate + 3 us); an odd size
# exercises the 16-byte words and the byte tail
"$BIN" bench h2d d2h d2d p2p bidir --sm --size 100003 --iters 3 --reps 2 --json >"$T/s.json"; rc=$?
py 'import json,sys
r=json.load(open(sys.argv[1]))["results"]; n=3*100003
def bw(rate, lanes=1): return round(lanes*n/(n/(rate*1e9)+3e-6)/1e9, 2)
assert len(r)==2+2+2+4+1, [x["mode"] for x in r]
for x in r:
    assert x["engine"]=="sm" and x["verified"] is True and x["skipped"] is None, x
    assert x["memory"] in ("pinned", None) and x["p2p"] in ("on", None), x
    want={"h2d":bw(27),"d2h":bw(28),"d2d":bw(1500),"p2p":bw(350),"bidir":bw(350,2)}[x["mode"]]
    assert x["gbps"]==want, (x, want)' "$T/s.json" && [ $rc -eq 0 ] &&
	ok "bench --sm: h2d/d2h/d2d/p2p/bidir rows, pinned and peer-on only, rates of the SM model, verified" ||
	nok "bench --sm json: rc=$rc $(head -c 600 "$T/s.json")"
out=$("$BIN" bench h2d --engine both --size 64K --iters 2 --reps 2 --csv); rc=$?
[ $rc -eq 0 ] && head -1 <<<"$out" | grep -q ',below_min,engine,' && [ "$(grep -c ',ce,' <<<"$out")" = 4 ] &&
	[ "$(grep -c ',pinned,.*,sm,' <<<"$out")" = 2 ] && ok "--engine both --csv: 4 copy-engine rows, 2 SM rows, engine in column 21" ||
	nok "engine both csv: rc=$rc $out"
out=$("$BIN" bench d2d --sm --size 64K --iters 2 --reps 2); rc=$?
[ $rc -eq 0 ] && grep -q "^d2d sm  *GPU0  *GPU0 " <<<"$out" && grep -q "copied by the GPU's cores" <<<"$out" &&
	ok "table: SM rows marked 'sm', with a note" || nok "sm table: $out"

# wrong data from an SM copy: exit 2, byte named
for m in h2d d2h d2d p2p; do
	err=$(FAKECUDA_CORRUPT=sm "$BIN" bench $m --sm --size 8K --iters 1 --reps 2 2>&1 >/dev/null); rc=$?
	[ $rc -eq 2 ] && grep -q "data wrong at byte 4097 after the timed copies" <<<"$err" && ok "bench $m --sm, corrupted: exit 2 naming byte 4097" ||
		nok "sm corrupt $m: rc=$rc $err"
done
FAKECUDA_BADPTX=1 expect 2 "cuModuleLoadData failed: CUDA_ERROR_INVALID_VALUE" bench h2d --sm --size 4K

# the bulk copy (gp_copy_bulk, compute capability 9.0 onwards): on 4 SMs (FAKECUDA_SMS) with a 256 KiB L2
# (FAKECUDA_L2) a copy within a GPU of at least 4 x 16 KiB and more than half the L2 takes it; with host
# or peer memory never; the kernel launched is named in FAKECUDA_MARKER's file. 200003 bytes = 12
# chunks + 3395 (212 words and 3 bytes after them).
M=$T/marker
launches() { grep -c "^$1\$" "$M" 2>/dev/null || true; }
export FAKECUDA_SMS=4 FAKECUDA_L2=262144
rm -f "$M"
FAKECUDA_MARKER=$M "$BIN" bench d2d --sm --gpu 0 --size 200003 --iters 3 --reps 2 --json >"$T/b.json"; rc=$?
py 'import json,sys
r=json.load(open(sys.argv[1]))["results"]; n=200003
assert len(r)==1 and r[0]["verified"] is True and r[0]["gbps"]==round(n/(n/1500e9+3e-6)/1e9,2), r' "$T/b.json" &&
	[ $rc -eq 0 ] && [ "$(launches gp_copy_bulk)" = 7 ] && [ "$(launches gp_copy16)" = 0 ] &&
	ok "bulk copy: d2d of 200003 bytes on 4 SMs, all 7 launches (warm-up, 2 x 3, check) the bulk kernel, verified" ||
	nok "bulk copy: rc=$rc bulk=$(launches gp_copy_bulk) plain=$(launches gp_copy16) $(head -c 400 "$T/b.json")"
for c in "h2d d2h p2p --size 200003" "d2d --size 131072" "d2d --size 65535"; do
	rm -f "$M"
	FAKECUDA_MARKER=$M "$BIN" bench $c --sm --gpu 0 --iters 2 --reps 2 -q >/dev/null; rc=$?
	[ $rc -eq 0 ] && [ "$(launches gp_copy_bulk)" = 0 ] && [ "$(launches gp_copy16)" -gt 0 ] &&
		ok "bench $c: gp_copy16 (host or peer memory; within the L2's half; under a chunk per SM)" ||
		nok "bench $c: rc=$rc bulk=$(launches gp_copy_bulk)"
done
# a GPU before Hopper: the bulk module is never loaded; a driver that refuses it: tried once, not per copy
# (the count includes the verification kernels' module, loaded once)
for why in "FAKECUDA_CC=8.0 2" "FAKECUDA_BADPTX=bulk 3"; do
	rm -f "$M"
	env ${why% *} FAKECUDA_MARKER=$M "$BIN" bench d2d --sm --gpu 0 --size 200003 --iters 2 --reps 2 -q >/dev/null; rc=$?
	[ $rc -eq 0 ] && [ "$(launches gp_copy_bulk)" = 0 ] && [ "$(launches gp_copy16)" -gt 0 ] &&
		[ "$(launches cuModuleLoadData)" = "${why#* }" ] &&
		ok "${why% *}: every copy by gp_copy16, verified, ${why#* } module load(s) in all" ||
		nok "${why% *}: rc=$rc bulk=$(launches gp_copy_bulk) loads=$(launches cuModuleLoadData)"
done
# the chunk counter: a kernel that does not put it back to 0 skips the next launches' chunks; the
# data check after the timed copies sees it
err=$(FAKECUDA_CORRUPT=bulkreset "$BIN" bench d2d --sm --gpu 0 --size 200003 --iters 2 --reps 2 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && grep -q "d2d GPU0->GPU0: data wrong at byte 0 after the timed copies" <<<"$err" &&
	ok "bulk copy whose counter is not reset: exit 2, data wrong from byte 0" || nok "bulkreset: rc=$rc $err"
err=$(FAKECUDA_FAIL=cuFuncSetAttribute "$BIN" bench d2d --sm --gpu 0 --size 200003 --iters 2 --reps 2 2>&1 >/dev/null); rc=$?
[ $rc -eq 0 ] && ok "the bulk kernel's shared memory refused (cuFuncSetAttribute fails): gp_copy16, exit 0" ||
	nok "FuncSetAttribute failing: rc=$rc $err"
unset FAKECUDA_SMS FAKECUDA_L2

# pointer chase: 1000 ns per load in host memory; in a peer's 700 on average over the SMs (by SM as
# recorded on 2x H200; a lone block's SM 721 ns): us per load, the mean over the SMs, each in turn
"$BIN" bench latency --sm --iters 2000 --reps 3 --json >"$T/l.json"; rc=$?
py 'import json,sys
r=json.load(open(sys.argv[1]))["results"]
assert [(x["path"], x["src"], x["dst"]) for x in r]==[("host","GPU0","host"),("host","GPU1","host"),("p2p","GPU0","GPU1"),("p2p","GPU1","GPU0")], r
for x in r:
    assert x["engine"]=="sm" and x["verified"] is True and x["iters"]==2000 and x["reps"]==3 and x["gbps"] is None, x
    assert x["us"]==(1.0 if x["path"]=="host" else 0.7) and x["size"]==64<<20 and x["stride"]==128 and x["chain"]=="stride", x' "$T/l.json" &&
	[ $rc -eq 0 ] && ok "latency --sm: host and peer chases, us per load over every SM, 64M chain (twice a 1M L2, 64M floor)" ||
	nok "latency --sm: rc=$rc $(head -c 600 "$T/l.json")"
out=$(FAKECUDA_L2=50331648 "$BIN" bench latency --sm --gpu 0 --random --seed 5 --iters 500 --reps 2 --csv --no-header); rc=$?
[ $rc -eq 0 ] && [ "$(cut -d, -f8 <<<"$out")" = 100663296 ] && grep -q ',1.000,1.000,,true,.*,sm,' <<<"$out" &&
	ok "latency --sm --random: chain = twice a 48 MiB L2 (96 MiB), walked and checked" || nok "random chase: rc=$rc $out"
# the double stops one load short: the warm-up (1000 loads, 128-byte stride) ends at slot 999, not 1000
err=$(FAKECUDA_CORRUPT=chase "$BIN" bench latency --sm --gpu 0 --iters 500 --reps 2 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && grep -q "latency GPU0->host: the pointer chase of the warm-up ended at byte 127872 of the chain, expected byte 128000" <<<"$err" &&
	ok "a chase that ends in the wrong place: exit 2, both offsets named" || nok "chase corrupt: rc=$rc $err"
# a chase of a batch, not the warm-up, ends one load short: 500 loads over 132 SMs are 4 each for
# blocks 0-103; block 0 takes the warm-up's 1000 to slot 1004, block 1 stops at 1007 instead of 1008
err=$(FAKECUDA_CORRUPT=chase-batch "$BIN" bench latency --sm --gpu 0 --iters 500 --reps 2 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && grep -q "latency GPU0->host: the pointer chase of batch 1 ended at byte $((1007 * 128)) of the chain, expected byte $((1008 * 128))" <<<"$err" &&
	ok "a batch's chase on SM block 1 that ends in the wrong place: exit 2, the batch and both offsets named" ||
	nok "chase-batch corrupt: rc=$rc $err"
# the mean over the SMs whatever their number (the double scales its recorded SMs to 700 ns)
out=$(FAKECUDA_SMS=8 "$BIN" bench latency --sm --iters 1000 --reps 2 --jsonl); rc=$?
[ $rc -eq 0 ] && [ "$(grep -c '"path": "p2p".*"us": 0.700,' <<<"$out")" = 2 ] &&
	ok "latency --sm on a GPU of 8 SMs: the peer chase's mean over its 8 SMs" || nok "8 SMs: rc=$rc $out"
out=$(FAKECUDA_NOPEER=1 "$BIN" bench latency --sm --iters 100 --reps 2 --jsonl); rc=$?
[ $rc -eq 0 ] && [ "$(grep -c '"skipped": *"no peer access' <<<"$out")" = 2 ] && [ "$(grep -c '"verified": *true' <<<"$out")" = 2 ] &&
	ok "no peer access: peer chases kept as skipped rows, host chases measured" || nok "nopeer chase: rc=$rc $out"

# usage errors
expect 64 "--engine takes ce, sm or both" bench --engine gpu
expect 64 "--stride wants a multiple of 8" bench latency --sm --stride 12
expect 64 "--random goes with --engine sm or --engine both" bench latency --random
expect 64 "--seed goes with latency" bench h2d --sm --seed 3
expect 64 "--seed wants a whole number" bench latency --sm --seed x
expect 64 "SM copies need pinned host memory" bench h2d --sm --pageable
expect 64 "SM copies between GPUs need peer access" bench p2p --sm --p2p off
expect 64 "no room for two slots" bench latency --sm --size 128 --stride 128
