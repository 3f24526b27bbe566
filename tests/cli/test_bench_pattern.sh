#!/bin/bash
# gpup2p bench one2all / all2one / all2host / host2all end to end without a GPU (tests/fakecuda): copies
# running together, one stream per pair behind one gate, each timed on its GPU from it. In the double
# every stream has its own virtual clock (peer copies: 2 us + bytes at 300 GB/s, FAKECUDA_PEER_GBPS per
# pair; SM: 3 us + bytes at 350); with FAKECUDA_HOST_GBPS=R every host copy also takes its turn, in
# queueing order, on one host link of R GB/s; FAKECUDA_NVLINK_GBPS=R replays the 4xH200 (tests/fakecuda/sched.c). The
# expected numbers below are worked out from that model by hand, not copied from output.
set -u
BUILD=${BUILD:-build}
BIN=$PWD/$BUILD/gpup2p
. tests/cli/lib.sh
FAKE=$PWD/$BUILD/tests/fakecuda/libcuda.so.1
export GPUP2P_PCI_IDS=$PWD/tests/fixtures/pci.ids NO_COLOR=1 GPUP2P_LIBCUDA=$FAKE
unset GPUP2P_ROOT FAKECUDA_GPUS FAKECUDA_NOPEER FAKECUDA_CORRUPT FAKECUDA_CORRUPT_NTH FAKECUDA_FAIL FAKECUDA_PEER_GBPS \
	FAKECUDA_HOST_GBPS
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
py() { python3 -c "$1" "${@:2}"; }
[ -f "$FAKE" ] || { nok "test double $FAKE not built"; exit 0; }

# one2all, 4 GPUs, GPU0->GPU1 at 100 GB/s (CUDA devices 3 and 2: the double numbers them in reverse bus
# order), every other pair 300: each pair's bandwidth is its own rate (n / (2 us + n / rate)); GPU0's
# aggregate is 3 pairs' bytes over the slowest pair's time (the 100 GB/s one)
FAKECUDA_GPUS=4 FAKECUDA_PEER_GBPS=3:2=100 "$BIN" bench one2all --size 1M --iters 2 --reps 2 --json >"$T/o.json"; rc=$?
py 'import json,sys
r=json.load(open(sys.argv[1]))["results"]; n=1<<20
def t(rate): return 2e-6+n/(rate*1e9)
assert len(r)==4*(3+1), len(r)
for x in r:
    assert x["mode"]=="one2all" and x["engine"]=="ce" and x["verified"] is True and x["skipped"] is None, x
    assert x["p2p"]=="on" and x["op"]=="write" and x["memory"] is None and x["size"]==n, x
agg={x["src"]:x for x in r if x["dst"]=="all"}
assert sorted(agg)==["GPU0","GPU1","GPU2","GPU3"] and all(x["path"]=="aggregate" for x in agg.values()), agg
pairs=[x for x in r if x["dst"]!="all"]
assert all(x["path"]=="p2p" for x in pairs) and len(pairs)==12
for x in pairs:
    want=round(n/t(100 if (x["src"],x["dst"])==("GPU0","GPU1") else 300)/1e9, 2)
    assert x["gbps"]==want, (x, want)
assert agg["GPU0"]["gbps"]==round(3*n/t(100)/1e9, 2), agg["GPU0"]
assert agg["GPU1"]["gbps"]==round(3*n/t(300)/1e9, 2), agg["GPU1"]
assert abs(agg["GPU0"]["us"]-t(100)*1e6)<0.002, agg["GPU0"]' "$T/o.json" && [ $rc -eq 0 ] &&
	ok "one2all, 4 GPUs: 3 pairs + aggregate per GPU; pair rates from the model; aggregate over the slowest pair" ||
	nok "one2all json: rc=$rc $(head -c 800 "$T/o.json")"

# all2one, 3 GPUs: the pairs end at each hub; the aggregate is 'all'->GPUk
out=$(FAKECUDA_GPUS=3 "$BIN" bench all2one --size 64K --iters 2 --reps 2 --csv); rc=$?
[ $rc -eq 0 ] && head -1 <<<"$out" | grep -q '^mode,path,src,dst,memory,p2p,op,size,iters,reps,gbps,.*,engine,host,max_gbps,' &&
	[ "$(grep -c '^all2one,p2p,GPU[0-2],GPU[0-2],,on,write,65536,2,2,' <<<"$out")" = 6 ] &&
	[ "$(grep -c '^all2one,aggregate,all,GPU[0-2],,on,write,65536,2,2,.*,true,,,false,ce,' <<<"$out")" = 3 ] &&
	! grep -q '^all2one,p2p,GPU\(.\),GPU\1,' <<<"$out" &&
	ok "all2one --csv: the same 30 columns; 6 pair rows, 3 'all'->GPUk aggregates, verified" || nok "all2one csv: rc=$rc $out"

# host2all and all2host with a 30 GB/s host link, 4 GPUs, 2 copies each, queued round robin: the link is
# busy from 0 to 8 x L (L = n / 30 GB/s), so the aggregate is exactly 30; GPU k's last copy is the
# (4 + k + 1)-th on the link: 2n / ((5 + k) L) = 60 / (5 + k) GB/s
for m in host2all all2host; do
	FAKECUDA_GPUS=4 FAKECUDA_HOST_GBPS=30 "$BIN" bench $m --size 1M --iters 2 --reps 3 --json >"$T/h.json"; rc=$?
	py 'import json,sys
r=json.load(open(sys.argv[1]))["results"]; m=sys.argv[2]
assert len(r)==5 and all(x["mode"]==m and x["memory"]=="pinned" and x["verified"] is True for x in r), r
assert r[4]["path"]=="aggregate" and (r[4]["src"],r[4]["dst"])==(("host","all") if m=="host2all" else ("all","host")), r[4]
assert r[4]["gbps"]==30.0, r[4]
for k in range(4):
    g="GPU%d"%k
    assert r[k]["path"]==("h2d" if m=="host2all" else "d2h") and g in (r[k]["src"],r[k]["dst"]), r[k]
    assert r[k]["gbps"]==round(60/(5+k), 2), (r[k], round(60/(5+k), 2))' "$T/h.json" $m && [ $rc -eq 0 ] &&
		ok "$m, 4 GPUs, host link 30 GB/s: aggregate 30.00, GPU k at 60/(5+k) GB/s" ||
		nok "$m host link: rc=$rc $(head -c 800 "$T/h.json")"
done
# without a host link cap the copies do not slow each other: aggregate = 2 x pinned h2d (25 GB/s + 2 us)
out=$(FAKECUDA_GPUS=2 "$BIN" bench host2all --size 1M --iters 2 --reps 2 --jsonl | tail -1)
py 'import json,sys
x=json.loads(sys.argv[1]); n=1<<20
assert x["dst"]=="all" and x["gbps"]==round(2*n/(2e-6+n/25e9)/1e9, 2), x' "$out" &&
	ok "host2all without a host link: aggregate = 2 pairs' bandwidth" || nok "host2all uncapped: $out"

# SM copies: one2all --sm, 3 GPUs: a batch of 2 copies is one kernel, 3 us + its bytes at 350 GB/s;
# aggregate 2 pairs
FAKECUDA_GPUS=3 "$BIN" bench one2all --sm --size 100003 --iters 2 --reps 2 --json >"$T/s.json"; rc=$?
py 'import json,sys
r=json.load(open(sys.argv[1]))["results"]; n=2*100003
bw=n/(3e-6+n/350e9)/1e9
assert len(r)==9 and all(x["engine"]=="sm" and x["verified"] is True for x in r), r
for x in r:
    assert x["gbps"]==round(2*bw if x["dst"]=="all" else bw, 2), (x, bw)' "$T/s.json" && [ $rc -eq 0 ] &&
	ok "one2all --sm: SM kernels per pair at the model's 350 GB/s, aggregate 2 pairs, verified" ||
	nok "one2all sm: rc=$rc $(head -c 800 "$T/s.json")"
out=$(FAKECUDA_GPUS=2 "$BIN" bench host2all all2host --engine both --size 64K --iters 1 --reps 2 --csv --no-header); rc=$?
[ $rc -eq 0 ] && [ "$(grep -c ',ce,' <<<"$out")" = 6 ] && [ "$(grep -c ',sm,' <<<"$out")" = 6 ] &&
	ok "--engine both: each pattern with copy engines and with SMs" || nok "engine both: rc=$rc $out"

# table: 'all' marks the aggregate, with a note
out=$(FAKECUDA_GPUS=2 "$BIN" bench one2all --size 64K --iters 2 --reps 2); rc=$?
[ $rc -eq 0 ] && grep -q "^one2all  *GPU0  *all  " <<<"$out" && grep -q "^one2all  *GPU1  *GPU0  " <<<"$out" &&
	grep -q "'all': the aggregate" <<<"$out" && ok "table: aggregate rows GPUk -> all, a note saying so" || nok "table: $out"

# one GPU: no pair for one2all/all2one; kept as a skipped aggregate row (as p2p rows without peer
# access are), exit 0; host patterns still measured
out=$(FAKECUDA_GPUS=1 "$BIN" bench one2all all2one all2host --size 64K --iters 1 --reps 2 --jsonl); rc=$?
[ $rc -eq 0 ] && [ "$(grep -c '"skipped": *"one GPU: no pair to copy between"' <<<"$out")" = 2 ] &&
	[ "$(grep -c '"gbps": *null' <<<"$out")" = 2 ] && [ "$(grep -c '"verified": *true' <<<"$out")" = 2 ] &&
	ok "one GPU: one2all/all2one a skipped aggregate each (gbps null), all2host measured, exit 0" || nok "1 GPU: rc=$rc $out"
out=$(FAKECUDA_GPUS=1 "$BIN" bench one2all --size 64K --iters 1 --reps 2); rc=$?
[ $rc -eq 0 ] && grep -q "Skipped rows: one GPU: no pair to copy between." <<<"$out" && ok "one GPU, table: says why" ||
	nok "1 GPU table: rc=$rc $out"
# no peer access anywhere: every pair skipped, and the aggregate
out=$(FAKECUDA_GPUS=2 FAKECUDA_NOPEER=1 "$BIN" bench one2all --size 64K --iters 1 --reps 2 --csv --no-header); rc=$?
[ $rc -eq 0 ] && [ "$(grep -c '^one2all,.*,,,false,ce,' <<<"$out")" = 4 ] && ok "no peer access: pairs and aggregates skipped, exit 0" ||
	nok "nopeer: rc=$rc $out"

# wrong data in one pair: exit 2 naming that pair only. 4 GPUs, hub GPU0, 1 copy per batch: peer copies
# 1-3 are the warm-up, 4-6 repetition 1, 7-9 repetition 2 (the last, checked) in pair order (GPU1, GPU2,
# GPU3): the 8th is GPU0->GPU2's
FAKECUDA_GPUS=4 FAKECUDA_CORRUPT=peer FAKECUDA_CORRUPT_NTH=8 "$BIN" bench one2all --gpu 0 --gpu 1 --gpu 2 --gpu 3 \
	--size 8K --iters 1 --reps 2 --json >"$T/c.json" 2>"$T/e"; rc=$?
[ $rc -eq 2 ] && [ "$(grep -c '' "$T/e")" = 1 ] &&
	grep -q "^gpup2p: one2all GPU0->GPU2: data wrong at byte 4097 after the timed copies: expected" "$T/e" &&
	py 'import json,sys
r=json.load(open(sys.argv[1]))["results"][:4]
assert [x["verified"] for x in r]==[True,False,True,False] and r[1]["bad_offset"]==4097, r' "$T/c.json" &&
	ok "one2all, one pair corrupted: exit 2, that pair named (byte 4097), it and the aggregate verified false" ||
	nok "corrupt: rc=$rc $(cat "$T/e") $(head -c 600 "$T/c.json")"
err=$(FAKECUDA_GPUS=2 FAKECUDA_CORRUPT=sm "$BIN" bench host2all --sm --size 8K --iters 1 --reps 2 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && [ "$(grep -c 'data wrong at byte 4097' <<<"$err")" = 2 ] && ! grep -q -- "->all" <<<"$err" &&
	ok "host2all --sm corrupted: exit 2, each pair named, no line for the aggregate" || nok "sm corrupt: rc=$rc $err"

# --min-bw on a pattern: its aggregate only
err=$(FAKECUDA_GPUS=2 FAKECUDA_HOST_GBPS=30 "$BIN" bench all2host --size 1M --iters 2 --reps 2 --min-bw all2host=31 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -q "all2host all->host pinned: 30.0 GB/s is below --min-bw 31.0" <<<"$err" && [ "$(grep -c '' <<<"$err")" = 1 ] &&
	ok "--min-bw all2host=31 with a 30 GB/s aggregate: exit 1, the aggregate named" || nok "min-bw: rc=$rc $err"
FAKECUDA_GPUS=2 FAKECUDA_HOST_GBPS=30 "$BIN" bench all2host --size 1M --iters 2 --reps 2 --min-bw all2host=29 -q >/dev/null 2>&1 &&
	ok "--min-bw all2host=29: pairs below it (20 GB/s) do not count, exit 0" || nok "min-bw pairs counted"

# one GPU's clock (issue 24): on the 4xH200's facts (NV18 every pair, 18 x 26.56 = 478.1 GB/s out of each
# GPU) with the double replaying that machine (FAKECUDA_NVLINK_GBPS=478: each GPU's NVLinks carry 478
# each way, its copy engines serve one stream at a time), GPU k's three copies run one after another,
# each t = 2 us + n / 300 GB/s: the pair ending j-th (j = 1..3) took j x iters x t from the shared
# start, the aggregate is 3 x iters x n over 3 x iters x t = one copy's rate. Timed by each stream's
# own events, every pair looked as fast as alone and the aggregate was 3x that (892 GB/s): more than
# the 478.1 the links carry.
H200=$BUILD/fixtures/h200x4-hgx/snapshot
HB=0000:00:06.0,0000:00:07.0,0000:00:08.0,0000:00:09.0
FAKECUDA_BUSIDS=$HB FAKECUDA_NVLINK_GBPS=478 "$BIN" --root "$H200" bench one2all --size 8M --iters 4 --reps 2 --json \
	>"$T/n.json" 2>"$T/e"; rc=$?
py 'import json,sys
r=json.load(open(sys.argv[1]))["results"]; n=8<<20; t=2e-6+n/300e9
assert len(r)==16, len(r)
for g in range(4):
    grp=r[4*g:4*g+4]; agg=grp[3]
    assert agg["src"]=="GPU%d"%g and agg["dst"]=="all" and agg["gbps"]==round(n/t/1e9, 2), (agg, round(n/t/1e9, 2))
    assert agg["max_gbps"]==478.12 and not agg["impossible"], agg
    assert sorted(x["gbps"] for x in grp[:3])==sorted(round(n/(j*t)/1e9, 2) for j in (1, 2, 3)), grp
    assert all(x["max_gbps"]==478.12 and x["verified"] for x in grp), grp' "$T/n.json" && [ $rc -eq 0 ] && [ ! -s "$T/e" ] &&
	ok "one2all on the 4xH200 replay: one clock, aggregate = one copy's rate, not 3x; below 478.1" ||
	nok "one2all one clock: rc=$rc $(cat "$T/e") $(head -c 900 "$T/n.json")"
# SM copies run side by side and share each GPU's 478 GB/s out: the aggregate is the link's, no more
FAKECUDA_BUSIDS=$HB FAKECUDA_NVLINK_GBPS=478 "$BIN" --root "$H200" bench one2all --sm --size 8M --iters 4 --reps 2 \
	--jsonl >"$T/s.jsonl"; rc=$?
py 'import json,sys
r=[json.loads(l) for l in open(sys.argv[1])]
agg=[x for x in r if x["dst"]=="all"]
assert len(agg)==4 and all(470<=x["gbps"]<=478.125 and not x["impossible"] for x in agg), agg' "$T/s.jsonl" && [ $rc -eq 0 ] &&
	ok "one2all --sm: kernels share the GPU's NVLinks, aggregate 470-478.1 GB/s" || nok "sm egress: rc=$rc $(head -c 600 "$T/s.jsonl")"
# a figure above what the links carry is a measurement error: links of 2000 GB/s in the double, the
# facts' 478.1: three SM kernels of 4 copies of n = 8 MiB, 3 us + 4 n / 350 GB/s each, sum to 1018.1,
# refused: exit 2, one line per aggregate, its figure not printed (null, 'error' in the table)
FAKECUDA_BUSIDS=$HB FAKECUDA_NVLINK_GBPS=2000 "$BIN" --root "$H200" bench one2all --sm --size 8M --iters 4 --reps 2 \
	--json >"$T/x.json" 2>"$T/e"; rc=$?
py 'import json,sys
r=json.load(open(sys.argv[1]))["results"]
agg=[x for x in r if x["dst"]=="all"]
assert all(x["impossible"] and x["gbps"] is None and x["max_gbps"]==478.12 and x["verified"] for x in agg), agg
assert not any(x["impossible"] for x in r if x["dst"]!="all"), r' "$T/x.json" && [ $rc -eq 2 ] &&
	[ "$(grep -c '' "$T/e")" = 4 ] && grep -q '^gpup2p: one2all GPU0->all: 1018.1 GB/s, its links carry 478.1: measurement error$' "$T/e" &&
	ok "above the links' 478.1 GB/s: exit 2, one 'measurement error' line per aggregate, figure null" ||
	nok "impossible: rc=$rc $(cat "$T/e") $(head -c 600 "$T/x.json")"
out=$(FAKECUDA_BUSIDS=$HB FAKECUDA_NVLINK_GBPS=2000 "$BIN" --root "$H200" bench one2all --sm --size 8M --iters 4 --reps 2 2>/dev/null)
grep -q '^one2all sm  *GPU0  *all  .* error  ' <<<"$out" && grep -q "^error: above its links' 478.1 GB/s (GPU0's 18 NVLinks x 26.56 GB/s)" <<<"$out" &&
	ok "table: 'error' for the figure, a note with the ceiling and how it was worked out" || nok "table error: $out"

# --op read (nvbandwidth's all_to_one_read_ce): each pair queued on its destination, which pulls; on the
# H200 replay the pulls run side by side on three GPUs and share the hub's 478 GB/s out, where the
# pushes above ran one after another on the hub's copy engines
FAKECUDA_BUSIDS=$HB FAKECUDA_NVLINK_GBPS=478 "$BIN" --root "$H200" bench one2all --op read --size 8M --iters 4 --reps 2 \
	--jsonl >"$T/r.jsonl"; rc=$?
py 'import json,sys
r=[json.loads(l) for l in open(sys.argv[1])]
assert len(r)==16 and all(x["op"]=="read" and x["verified"] for x in r), r
agg=[x for x in r if x["dst"]=="all"]
assert all(470<=x["gbps"]<=478.125 for x in agg), agg' "$T/r.jsonl" && [ $rc -eq 0 ] &&
	ok "one2all --op read: pulled by the destinations side by side, the hub's links shared (470-478.1)" ||
	nok "one2all read: rc=$rc $(head -c 600 "$T/r.jsonl")"
out=$(FAKECUDA_GPUS=3 "$BIN" bench one2all all2one --op both --engine both --size 64K --iters 1 --reps 2 --csv --no-header); rc=$?
[ $rc -eq 0 ] && [ "$(grep -c '^one2all,aggregate,GPU.,all,,on,write,' <<<"$out")" = 6 ] &&
	[ "$(grep -c '^all2one,aggregate,all,GPU.,,on,read,' <<<"$out")" = 6 ] && [ "$(grep -c ',true,,,false,[cs][em],' <<<"$out")" = 72 ] &&
	ok "--op both --engine both: write and read groups for each hub and engine, 72 rows verified" || nok "op both: rc=$rc $out"
# --duplex (all_to_host_bidirectional): every GPU also copies the other way at the same time, twice as
# many copies, not counted: with one host link of 30 GB/s the measured copies get only part of it, so
# the aggregate is below the 30 that all2host alone gets (above)
out=$(FAKECUDA_GPUS=2 FAKECUDA_HOST_GBPS=30 "$BIN" bench all2host --duplex --size 1M --iters 2 --reps 2 --jsonl); rc=$?
py 'import json,sys
r=[json.loads(l) for l in sys.argv[1].splitlines()]
assert len(r)==3 and all(x["op"]=="duplex" and x["memory"]=="pinned" and x["verified"] for x in r), r
assert 0 < r[2]["gbps"] < 30 and r[2]["dst"]=="host" and r[2]["src"]=="all", r[2]' "$out" && [ $rc -eq 0 ] &&
	ok "all2host --duplex: op duplex, the aggregate below the host link (the other way shares it)" || nok "duplex: rc=$rc $out"
# --duplex --sm (all_to_host_bidirectional_memcpy_sm, host_to_all_...): each GPU one split-warp kernel a
# copy; with one host link of 30 GB/s both ways' bytes share it, so the per-direction figures (both ways'
# bytes / time / 2) of the two GPUs add up to 15; a wrong byte of the reverse copy is caught
rm -f "$T/m"
out=$(FAKECUDA_GPUS=2 FAKECUDA_HOST_GBPS=30 FAKECUDA_MARKER="$T/m" "$BIN" bench all2host host2all --duplex --sm --size 1M \
	--iters 2 --reps 2 --jsonl); rc=$?
py 'import json,sys
r=[json.loads(l) for l in sys.argv[1].splitlines()]
assert len(r)==6 and all(x["op"]=="duplex" and x["engine"]=="sm" and x["verified"] for x in r), r
agg=[x for x in r if x["path"]=="aggregate"]
assert len(agg)==2 and all(abs(x["gbps"]-15)<0.01 for x in agg), agg
m=open(sys.argv[2]).read().split()
assert m.count("gp_copy_duplex")==20 and "gp_copy16" not in m, m' "$out" "$T/m" && [ $rc -eq 0 ] &&
	ok "all2host/host2all --duplex --sm: split-warp kernels, host link 30: aggregate 15 per direction" ||
	nok "pattern duplex sm: rc=$rc $out"
err=$(FAKECUDA_GPUS=2 FAKECUDA_CORRUPT=duplexback "$BIN" bench host2all --duplex --sm --size 1M --iters 2 --reps 2 -q \
	2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && grep -q "^gpup2p: host2all GPU1->host: data wrong at byte 4609 after the timed copies" <<<"$err" &&
	ok "host2all --duplex --sm, the reverse copy corrupted: exit 2, GPU->host named" || nok "pattern duplexback: rc=$rc $err"

# Gated copies on several GPUs are timed on each GPU's clock from the gate: a signal crossing between
# GPUs (FAKECUDA_XWAIT_US=5: a wait for another GPU's event goes on 5 us after it; 3.5 to 9 us on the
# 4x H200, tests/perf/results/oracle-h200x4-2026-11-27e.log) is not counted. bidir (write: each
# direction queued on its source) and one2all --op read (each pull on its destination): the same
# figures as with no crossing cost, each direction or pull n / (2 us + n / 300) (timed on one GPU's
# clock with both signals crossing, as before stop 38, bidir gave 199.82 instead of 381.63)
for x in 0 5; do
	FAKECUDA_XWAIT_US=$x "$BIN" bench bidir --p2p on --size 1M --iters 2 --reps 2 --jsonl >"$T/b$x.jsonl" &&
		FAKECUDA_GPUS=4 FAKECUDA_XWAIT_US=$x "$BIN" bench one2all --op read --size 1M --iters 2 --reps 2 \
			--jsonl >>"$T/b$x.jsonl" || nok "xwait $x: bench failed"
done
py 'import json,sys
a,b=([json.loads(l) for l in open(f)] for f in sys.argv[1:3]); n=1<<20; t=2e-6+n/300e9
assert len(a)==len(b)==1+4*4, (len(a), len(b))
assert [x["gbps"] for x in a]==[x["gbps"] for x in b], (a, b)
bi=[x for x in b if x["mode"]=="bidir"]
assert len(bi)==1 and bi[0]["gbps"]==round(2*n/t/1e9,2), bi
pulls=[x for x in b if x["mode"]=="one2all" and x["dst"]!="all"]
assert len(pulls)==12 and all(x["gbps"]==round(n/t/1e9,2) for x in pulls), pulls' "$T/b0.jsonl" "$T/b5.jsonl" &&
	ok "gated copies on several GPUs: 5 us signal crossings between GPUs not in the figures" ||
	nok "xwait: $(cat "$T/b5.jsonl")"

# the wait for the shared start failing: one line naming the call, exit 2, nothing hangs
err=$(FAKECUDA_GPUS=3 FAKECUDA_FAIL=cuStreamWaitEvent "$BIN" bench one2all --size 64K --iters 1 --reps 1 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && [ "$err" = "gpup2p: cuStreamWaitEvent failed: CUDA_ERROR_OUT_OF_MEMORY (2)" ] &&
	ok "cuStreamWaitEvent failing: exit 2, one line naming it" || nok "wait fails: rc=$rc $err"

expect 64 "--op goes with p2p, bidir, one2all or all2one" bench h2d --op read
expect 64 "--duplex goes with h2d, d2h, all2host or host2all" bench p2p --duplex
expect 64 "--op takes write, read or both, not 'pull'" bench p2p --op pull
expect 64 "unknown mode 'one2al' .*one2all, all2one, all2host or host2all" bench one2al
expect 64 "--min-bw wants GBPS or MODE=GBPS .*host2all" bench --min-bw one2many=3
