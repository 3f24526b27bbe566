#!/bin/bash
# gpup2p bench rdma end to end over the libibverbs test double (tests/fakeverbs: RC queue pairs looped back
# in the process) and libcuda's (tests/fakecuda-dmabuf): the CLI contract (options, JSON/JSONL/CSV keys,
# exit codes), every refusal as one line with its fix, the NIC chosen for a GPU and the distance reported.
# The real soft-RoCE runs, client/server included, are the QEMU guests' (tests/vm).
set -u
BUILD=${BUILD:-build}
BIN=$PWD/$BUILD/gpup2p
. tests/cli/lib.sh
VERBS=$PWD/$BUILD/tests/fakeverbs/libibverbs.so.1
CUDA=$PWD/$BUILD/tests/fakecuda-dmabuf/libcuda.so.1
export GPUP2P_PCI_IDS=$PWD/tests/fixtures/pci.ids NO_COLOR=1 GPUP2P_LIBIBVERBS=$VERBS GPUP2P_LIBCUDA=$CUDA
export FAKEVERBS_DEVICES=rxe0
unset GPUP2P_ROOT FAKECUDA_GPUS FAKECUDA_BUSIDS FAKEVERBS_PORT_STATE FAKEVERBS_LINK FAKEVERBS_GID_TYPES \
	FAKEVERBS_REG_FAIL FAKEVERBS_REG_FAIL_OVER FAKEVERBS_DMABUF_FAIL FAKEVERBS_STALL FAKEVERBS_CORRUPT FAKEVERBS_MTU FAKEVERBS_GBPS
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
py() { python3 -c "$1" "${@:2}"; }
FX=$PWD/$BUILD/fixtures
for f in "$VERBS" "$CUDA"; do [ -f "$f" ] || { nok "test double $f not built"; exit 0; }; done

# JSON: the envelope, one result per operation, the contract's keys, numbers consistent with each other
"$BIN" bench rdma --iters 20 --reps 3 --json >"$T/r.json"; rc=$?
py 'import json,sys
d=json.load(open(sys.argv[1])); r=d["results"]
assert d["schema"]==1 and d["command"]=="bench rdma" and d["exit_status"]==0, d
assert [x["op"] for x in r]==["write","read","send"], r
keys="mode op test device port mem mem_path gpu distance bytes iters gbps gbits_avg gbits_peak mpps port_gbits port_fraction us_min us_median us_p99 verified".split()
for x in r:
    assert all(k in x for k in keys), [k for k in keys if k not in x]
    assert x["mode"]=="rdma" and x["test"]=="bw" and x["device"]=="rxe0" and x["port"]==1 and x["mem"]=="host"
    assert x["mem_path"]=="host" and x["gpu"] is None and x["distance"]=="host" and x["bytes"]==65536
    assert x["iters"]==20 and x["reps"]==3 and x["verified"] is True and x["us_min"] is None
    assert abs(x["gbps"]*8-x["gbits_avg"])<0.01 and x["gbits_peak"]>=x["gbits_avg"]
    # 25 Gb/s x 4 lanes x 4096/(4096+82): RoCE v2 EDR 4x at MTU 4096, by hand 98.037
    assert x["port_gbits"]==98.037, x["port_gbits"]
    assert abs(x["port_fraction"]-x["gbits_avg"]/98.0373)<0.001, x' "$T/r.json" && [ $rc -eq 0 ] &&
	ok "bench rdma --json: write, read and send, the contract's keys, Gb/s = 8 x GB/s, fraction of 98.037 Gb/s" ||
	nok "bench rdma --json: rc=$rc $(head -c 600 "$T/r.json")"

# the double's own clock (tests/fakeverbs: 20 GB/s wire, 1 us per completion), not the CPU's: 20 writes
# of 64 KiB take 20 x 3.2768 + 1 us, 19.699 GB/s, on any machine however loaded; a ping-pong of 64 KiB
# 3.2768 + 1 us one way
out=$(FAKEVERBS_GBPS=20 "$BIN" bench rdma --op write --iters 20 --jsonl; FAKEVERBS_GBPS=20 "$BIN" bench rdma \
	--op write --lat --size 64K --iters 10 --jsonl); rc=$?
py 'import json,sys
b,l=[json.loads(x) for x in sys.argv[1].splitlines()]
assert b["gbps"]==19.699 and b["gbits_peak"]==b["gbits_avg"], b
assert l["us_min"]==l["us_p99"]==4.277, l' "$out" && [ $rc -eq 0 ] &&
	ok "rates on the double's clock: 19.699 GB/s and 4.277 us exactly, whatever the load" ||
	cli_fail "rates on the double's clock" "$rc" "$out" "bench rdma --op write (FAKEVERBS_GBPS=20)"

out=$("$BIN" bench rdma --lat --op send --jsonl); rc=$?
py 'import json,sys
r=[json.loads(l) for l in sys.argv[1].splitlines()]
assert len(r)==1 and r[0]["test"]=="lat" and r[0]["op"]=="send" and r[0]["bytes"]==8 and r[0]["gbps"] is None
assert 0<r[0]["us_min"]<=r[0]["us_median"]<=r[0]["us_p99"] and r[0]["verified"] is True
assert list(r[0])[:3]==["schema","command","mode"] and r[0]["command"]=="bench rdma"' "$out" && [ $rc -eq 0 ] &&
	ok "bench rdma --lat --jsonl: one line, schema and command first, 8 bytes by default, min <= median <= p99" ||
	nok "--lat --jsonl: rc=$rc $out"

out=$("$BIN" bench rdma --op read --min 4K --max 16K --iters 5 --csv); rc=$?
hdr=$(head -1 <<<"$out")
[ $rc -eq 0 ] && [ "$(wc -l <<<"$out")" = 4 ] && [[ $hdr == mode,op,test,device,port,mem,mem_path,gpu,* ]] &&
	cut -d, -f13 <<<"$out" | tail -3 | tr '\n' ' ' | grep -qx '4096 8192 16384 ' &&
	ok "bench rdma --csv sweep 4K..16K: header and three sizes" || nok "csv sweep: rc=$rc $out"

out=$("$BIN" bench rdma --op write --iters 5); rc=$?
grep -q '^RDMA loopback: rxe0 port 1 (RoCE v2, MTU 4096, 98.0 Gb/s after headers), memory host' <<<"$out" &&
	grep -qE '^write +bw +65536 +25 .* yes$' <<<"$out" && [ $rc -eq 0 ] &&
	ok "table: the port line and perftest's columns" || nok "table: rc=$rc $out"
FAKEVERBS_LINK=ib "$BIN" bench rdma --op write --iters 5 --jsonl | grep -q '"port_gbits": 99.369' &&
	ok "InfiniBand EDR 4x: 100 x 4096/(4096+26) = 99.369 Gb/s" || nok "IB port rate"

# --min-bw: exit 1 with a line; the result still printed
out=$("$BIN" bench rdma --op write --iters 5 --min-bw 100000 --jsonl 2>"$T/err"); rc=$?
[ $rc -eq 1 ] && grep -q '"below_min": true' <<<"$out" && grep -q 'below --min-bw 100000' "$T/err" &&
	ok "--min-bw above the result: exit 1, below_min true" || nok "--min-bw: rc=$rc $out $(cat "$T/err")"

# --min-bw through bench's threshold parser: per operation, and what is no number of GB/s refused
out=$("$BIN" bench rdma --iters 5 --min-bw read=100000 --min-bw 0.000001 --jsonl 2>"$T/err"); rc=$?
py 'import json,sys
r={x["op"]:x for x in map(json.loads, sys.argv[1].splitlines())}
assert r["read"]["min_gbps"]==100000 and r["read"]["below_min"] is True, r["read"]
assert r["write"]["below_min"] is False and r["send"]["below_min"] is False' "$out" && [ $rc -eq 1 ] &&
	grep -q 'read 65536 bytes: .* below --min-bw 100000' "$T/err" && ! grep -q '^gpup2p: bench rdma write' "$T/err" &&
	ok "--min-bw read=100000: only read is held to it (exit 1); the others to the generic floor" ||
	nok "--min-bw read=: rc=$rc $out $(cat "$T/err")"
expect 64 '\-\-min-bw wants GB/s above 0' bench rdma --min-bw inf
expect 64 '\-\-min-bw wants GB/s above 0' bench rdma --min-bw lat=5

# cli_load: the PCI model's warnings are printed (a malformed numa_node in the root)
"$BIN" --root "$FX/broken-optional" bench rdma --op write --iters 5 >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 0 ] && grep -q 'malformed NUMA node "banana"' "$T/err" &&
	ok "bench rdma loads the PCI model as every command does: its warnings on stderr" ||
	nok "bench rdma warnings: rc=$rc $(cat "$T/err")"

# --peer-device: the second QP on another device; both named, each side's distance
export FAKEVERBS_DEVICES=rxe0,rxe1
out=$("$BIN" bench rdma --device rxe0 --peer-device rxe1 --op write --iters 5 --jsonl); rc=$?
py 'import json,sys
r=json.loads(sys.argv[1])
assert r["device"]=="rxe0" and r["peer_device"]=="rxe1" and r["port"]==1 and r["peer_port"]==1, r
assert r["distance"]=="host" and r["peer_distance"]=="host" and r["verified"] is True, r' "$out" && [ $rc -eq 0 ] &&
	ok "--device rxe0 --peer-device rxe1: device and peer_device, each side's distance" || nok "peer-device: rc=$rc $out"
out=$("$BIN" bench rdma --peer-device rxe1 --lat --op write); rc=$?
grep -q '^RDMA loopback: rxe0 port 1 (RoCE v2, MTU 4096, 98.0 Gb/s after headers) to rxe1 port 1 (RoCE v2, MTU 4096, 98.0 Gb/s after headers), memory host (NIC-memory distance host), peer host (distance host)$' <<<"$out" &&
	grep -qE '^write +lat +8 +5000 .* yes$' <<<"$out" && [ $rc -eq 0 ] &&
	ok "table, two devices: both ports on the first line" || nok "two devices table: rc=$rc $out"
out=$("$BIN" bench rdma --device rxe0 --peer-device rxe0 --op write --iters 5 --jsonl); rc=$?
grep -q '"peer_device": "rxe0", "peer_port": 1' <<<"$out" && [ $rc -eq 0 ] && ok "the same device twice: one device" ||
	nok "same device twice: rc=$rc $out"
expect 64 'no RDMA device mlx5_9 \(there are: rxe0, rxe1\)' bench rdma --peer-device mlx5_9
FAKEVERBS_LINK_rxe1=ib expect 64 'rxe0 port 1 is RoCE and rxe1 port 1 is InfiniBand: a loopback joins two ports of one link layer' \
	bench rdma --device rxe0 --peer-device rxe1
expect 64 '\-\-peer-device and \-\-connect exclude each other' bench rdma --connect h --peer-device rxe1
FAKEVERBS_DEVICES= expect 69 'no RDMA device' bench rdma --peer-device rxe1
expect 64 '\-\-peer-gid-index goes with \-\-peer-device or \-\-peer-ib-port' bench rdma --peer-gid-index 1
# the option checks that were gp_rdma_plan's (libcore) and are the command line's now
expect 64 "\-\-peer-gid-index on the first queue pair's own device and port" bench rdma --peer-gid-index 3 --peer-ib-port 1
expect 64 "\-\-peer-gid-index on the first queue pair's own device and port" bench rdma --device rxe0 --peer-device rxe0 --peer-gid-index 3
expect 64 '\-\-peer-ib-port and \-\-server exclude each other' bench rdma --server --peer-ib-port 2
expect 64 '\-\-min goes with \-\-max' bench rdma --min 4K
expect 64 '\-\-factor goes with \-\-min' bench rdma --factor 2
expect 64 '\-\-min must not be above \-\-max' bench rdma --min 8K --max 4K
expect 64 'more than [0-9]+ sizes: use a larger \-\-factor' bench rdma --min 1 --max 1G --factor 1.0001
export FAKEVERBS_DEVICES=rxe0

# refusals: one line each, with the fix
FAKEVERBS_PORT_STATE=1 expect 2 'rxe0 port 1 is DOWN, not ACTIVE: bring its network interface up' bench rdma
FAKEVERBS_GID_TYPES=1 expect 2 'port 1 is RoCE but has no RoCE v2 GID' bench rdma
FAKEVERBS_REG_FAIL=ENOMEM FAKEVERBS_REG_FAIL_OVER=4096 expect 2 'RLIMIT_MEMLOCK .*\(ulimit -l\)' bench rdma
FAKEVERBS_DMABUF_FAIL=EOPNOTSUPP expect 2 'dma-buf: rxe0 cannot register a dma-buf.*nvidia_peermem module is not loaded: modprobe nvidia-peermem' \
	bench rdma --mem gpu
GPUP2P_LIBIBVERBS=$PWD/$BUILD/tests/fakeverbs-old/libibverbs.so.1 expect 69 'no ibv_reg_dmabuf_mr.*nvidia_peermem' bench rdma --mem gpu:1
GPUP2P_LIBIBVERBS=$T/none/libibverbs.so.1 expect 69 'libibverbs.so.1 not available' bench rdma
FAKEVERBS_DEVICES= expect 69 'no RDMA device' bench rdma
GPUP2P_LIBCUDA=$T/none/libcuda.so.1 expect 69 'CUDA not available' bench rdma --mem gpu
expect 64 'no RDMA device mlx5_9 \(there are: rxe0\)' bench rdma --device mlx5_9
out=$(FAKEVERBS_STALL=30 timeout 120 "$BIN" bench rdma --op write --timeout 1 --jsonl 2>"$T/err"); rc=$?
[ $rc -eq 2 ] && grep -q 'no completion on rxe0 for 1 s: the peer stopped answering' "$T/err" &&
	ok "a peer that stops answering: exit 2 after --timeout 1, no hang" || nok "stall: rc=$rc $(cat "$T/err")"
out=$(FAKEVERBS_CORRUPT=1 "$BIN" bench rdma --op send --json 2>"$T/err"); rc=$?
[ $rc -eq 2 ] && grep -q 'send of 65536 bytes on rxe0: wrong data at byte 0' "$T/err" &&
	py 'import json,sys; d=json.loads(sys.argv[1]); assert d["exit_status"]==2 and d["results"]==[]' "$out" &&
	ok "wrong data: exit 2, named; the JSON says exit_status 2" || nok "corrupt: rc=$rc $out $(cat "$T/err")"

# GPU memory: dma-buf first; the NIC closest to the GPU by topo, and the distance
out=$("$BIN" bench rdma --mem gpu --op write --iters 5 --jsonl); rc=$?
grep -q '"mem": "gpu", "mem_path": "dmabuf", "gpu": 0,' <<<"$out" && [ $rc -eq 0 ] &&
	ok "--mem gpu: dma-buf, GPU 0" || nok "--mem gpu: rc=$rc $out"
export FAKEVERBS_DEVICES=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7 FAKECUDA_GPUS=8
out=$("$BIN" --root "$FX/dgx-h100" bench rdma --mem gpu:2 --op write --iters 5 --jsonl); rc=$?
grep -q '"device": "mlx5_2",.*"gpu": 2,.*"distance": "PIX"' <<<"$out" && [ $rc -eq 0 ] &&
	ok "dgx-h100: GPU2's closest NIC is mlx5_2 (PIX), chosen without --device" || nok "pairing: rc=$rc $out"
out=$("$BIN" --root "$FX/dgx-h100" bench rdma --mem gpu:2 --device mlx5_6 --op write --iters 5 --jsonl); rc=$?
grep -q '"device": "mlx5_6",.*"distance": "SYS"' <<<"$out" && ok "--device mlx5_6 for GPU2: distance SYS (the other socket)" ||
	nok "distance SYS: rc=$rc $out"
out=$("$BIN" --root "$FX/dgx-h100" bench rdma --mem gpu:4 --peer-mem host --op read --iters 5 --jsonl); rc=$?
grep -q '"device": "mlx5_4",.*"peer_mem": "host", "peer_mem_path": "host", "peer_gpu": null, "distance": "PIX"' <<<"$out" &&
	ok "--peer-mem host: the other QP in host memory" || nok "peer-mem: rc=$rc $out"
export FAKEVERBS_DEVICES=rxe0
unset FAKECUDA_GPUS

# usage
expect 64 '\-\-op takes write, read, send or all' bench rdma --op atomic
expect 64 '\-\-mem takes host, gpu, gpu:N or auto' bench rdma --mem gpu:x
expect 64 '\-\-server and \-\-connect exclude each other' bench rdma --server --connect h
expect 64 '\-\-peer-mem and \-\-connect exclude each other' bench rdma --connect h --peer-mem host
expect 64 '\-\-bind goes with \-\-server' bench rdma --bind 10.0.0.1
expect 64 '\-\-bind goes with \-\-server' bench rdma --listen 10.0.0.1
expect 64 '\-\-bind needs an address' bench rdma --server --bind=
expect 64 '\-\-timeout wants a whole number' bench rdma --timeout 0
expect 64 '\-\-size and \-\-min exclude each other' bench rdma --size 4K --min 1K --max 8K
expect 64 'unknown option .--frob.' bench rdma --frob
out=$("$BIN" bench rdma --help); rc=$?
[ $rc -eq 0 ] && grep -q 'usage: gpup2p bench rdma' <<<"$out" && ok "bench rdma --help" || nok "help: rc=$rc"
"$BIN" help bench | grep -q 'gpup2p bench rdma' && ok "bench's help points to bench rdma" || nok "bench help"

# between hosts the address picks the NIC: GPU memory does not force the closest one on rdma_cm
# (librdmacm's double binds ids to the first device, mlx5_3 here; nothing listens on port 1)
out=$(GPUP2P_LIBRDMACM=$VERBS FAKEVERBS_DEVICES=mlx5_3,mlx5_0 FAKECUDA_GPUS=8 "$BIN" --root "$FX/dgx-h100" bench rdma \
	--connect 127.0.0.1 --rdma-port 1 --mem gpu:0 --timeout 2 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q 'REJECTED.*is .gpup2p bench rdma --server. running there' <<<"$out" &&
	ok "--connect with GPU memory: the NIC is rdma_cm's; no server: REJECTED, exit 2, naming the fix" ||
	nok "--connect to nobody: rc=$rc $out"

# the server's address: 127.0.0.1 (this host only) unless --bind (or --listen) names one; the double
# writes what rdma_bind_addr got (FAKECM_BIND_LOG). The server waits for a client: stopped once bound.
bound() {
	local log=$T/bind.$RANDOM pid n
	GPUP2P_LIBRDMACM=$VERBS FAKECM_BIND_LOG=$log "$BIN" --root "$FX/dgx-h100" bench rdma --server --rdma-port 20999 \
		"$@" >/dev/null 2>"$log.err" &
	pid=$!
	for n in $(seq 200); do [ -s "$log" ] && break; kill -0 $pid 2>/dev/null || break; sleep 0.05; done
	kill $pid 2>/dev/null; wait $pid 2>/dev/null
	cat "$log" 2>/dev/null || echo "none: $(cat "$log.err")"
}
[ "$(bound)" = "127.0.0.1 20999" ] && ok "--server: bound to 127.0.0.1 by default" || nok "--server default: $(bound)"
[ "$(bound --bind 10.1.2.3)" = "10.1.2.3 20999" ] && ok "--server --bind 10.1.2.3: bound there" ||
	nok "--bind: $(bound --bind 10.1.2.3)"
[ "$(bound --listen ::)" = ":: 20999" ] && ok "--listen :: (the old name): every address" || nok "--listen ::: $(bound --listen ::)"
