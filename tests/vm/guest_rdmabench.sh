#!/bin/bash
# `gpup2p bench rdma` over soft-RoCE, in both guests of the pair (topo-pair0: server, topo-pair1:
# client), run by check.sh. Written against the command's contract (issue
# 14): the client guest runs the loopback tests (one device, two QPs), the server guest the refusals
# (memlock, GPU memory on rxe); then client/server across the link, and the server killed mid-run.
# The guests meet through files in each other's workspace (signal/await in rxe.sh).
set -u
. tests/vm/rxe.sh
pair_args
rxe_up "$IP/24"
J=$GPUP2P_VM_WS
T=20    # --timeout of the client/server runs

# jsonl FILE: check every JSON line of FILE (bench --jsonl) is an RDMA result as the contract gives it;
# prints the ops seen ("read send write") on success
jsonl() {
	python3 -c 'import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
bad = [r for r in recs if not (r.get("mode") == "rdma" and r.get("op") and r.get("test") and
       r.get("device") == "rxe0" and r.get("mem_path") == "host" and r.get("bytes", 0) > 0 and
       r.get("gbps", 0) > 0 and r.get("verified") is True)]
if not recs or bad:
    print("bad records: %s" % (bad[:2] or "none"), file=sys.stderr)
    sys.exit(1)
print(" ".join(sorted({r["op"] for r in recs})))' "$1"
}

if [ "$ROLE" = client ]; then
	# loopback on rxe0: every operation, host memory, checked and timed
	timeout 300 "$B" bench rdma --device rxe0 --mem host --op all --size 64K --iters 200 --jsonl >"$J/loop.jsonl" 2>"$J/loop.err"
	rc=$?
	ops=$(jsonl "$J/loop.jsonl" 2>>"$J/loop.err")
	chk "loopback --op all --size 64K --jsonl: exit 0, records mode rdma, device rxe0, mem_path host, gbps > 0, verified ($ops)" \
		bash -c "[ $rc -eq 0 ] && [ '$ops' = 'read send write' ]"
	[ $rc -eq 0 ] || sed 's/^/#   /' "$J/loop.err" | head -5
	timeout 300 "$B" bench rdma --device rxe0 --mem host --lat --size 64 --iters 200 --jsonl >"$J/lat.jsonl" 2>"$J/lat.err"
	rc=$?
	chk "loopback --lat --jsonl: exit 0, latency records of mode rdma on rxe0" \
		bash -c "[ $rc -eq 0 ] && grep -q '\"mode\": *\"rdma\"' '$J/lat.jsonl' && grep -q '\"device\": *\"rxe0\"' '$J/lat.jsonl'"
	{ head -c 600 "$J/loop.jsonl"; echo; } | sed 's/^/# loopback: /'   # a line of its own: check.sh counts ^ok
	signal c-ready

	# client/server: the server's first run
	await srv1 600
	# 64K x 50 of each op: RDMA read and write complete nothing on the server, which waits for the
	# client's next message --timeout and the run's time at 1/100 of the port's rate (it used to wait
	# --timeout alone: at soft-RoCE's 4-5 MB/s under a loaded host 200 iterations took 18 s of the 20
	# and once more, the server gave up); 50 keep the pair short either way
	for a in 1 2 3 4 5; do
		s=$(date +%s)
		timeout 120 "$B" bench rdma --connect "$PEER" --device rxe0 --mem host --size 64K --iters 50 --jsonl \
			--timeout $T >"$J/cs.jsonl" 2>"$J/cs.err"
		rc=$?
		# every attempt's outcome, so that a failure after the server took the first one can be read
		echo "attempt $a: exit $rc after $(($(date +%s) - s)) s: $(head -c 300 "$J/cs.err" | tr '\n' ' ')" >>"$J/cs.log"
		[ $rc -eq 0 ] && break
		sleep 2 # the server may not listen yet
	done
	ops=$(jsonl "$J/cs.jsonl" 2>>"$J/cs.err")
	chk "client --connect $PEER: exit 0, verified results (${ops:-none})" bash -c "[ $rc -eq 0 ] && [ -n '$ops' ]"
	[ $rc -eq 0 ] || { sed 's/^/#   /' "$J/cs.err" | head -5; sed 's/^/#   /' "$J/cs.log"; }
	signal cli1

	# the server's second run, killed once this client is under way: an error within --timeout
	await srv2 300
	start=$(date +%s)
	timeout 300 "$B" bench rdma --connect "$PEER" --device rxe0 --mem host --size 64K --iters 1000000 \
		--timeout $T >"$J/kill.out" 2>"$J/kill.err" &
	pid=$!
	sleep 5
	signal cli2
	wait $pid
	rc=$?
	end=$(date +%s)
	killed=$(cat "$PW/killed" 2>/dev/null)
	after=$((end - ${killed:-$end}))
	chk "server killed mid-run: client exits nonzero (exit $rc) within --timeout $T s of the kill (${killed:+$after s})" \
		bash -c "[ $rc -ne 0 ] && [ $rc -ne 124 ] && [ -n '$killed' ] && [ $after -ge 0 ] && [ $after -le $((T + 10)) ]"
	sed 's/^/#   /' "$J/kill.err" | head -3
	echo "# client run before the kill: $((end - start)) s"
else
	# RLIMIT_MEMLOCK: as an unprivileged user (root's CAP_IPC_LOCK ignores the limit), 64 KiB locked
	out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups -- bash -c \
		"ulimit -l 64 && timeout 120 '$(pubbin)' bench rdma --device rxe0 --mem host --op write --size 16M --iters 2" 2>&1)
	rc=$?
	chk "ulimit -l 64, --size 16M: an error naming RLIMIT_MEMLOCK (exit $rc)" \
		bash -c '[ "$1" -ne 0 ] && [ "$1" -ne 124 ] && grep -q RLIMIT_MEMLOCK <<<"$2"' _ $rc "$out"
	echo "$out" | head -2 | sed 's/^/#   /'
	# GPU memory through the CUDA test double: rxe registers no dma-buf, nvidia-peermem is not loaded
	out=$(GPUP2P_LIBCUDA=$PWD/build/tests/fakecuda-dmabuf/libcuda.so.1 FAKECUDA_GPUS=1 timeout 120 \
		"$B" bench rdma --device rxe0 --mem gpu --op write --size 64K --iters 10 2>&1)
	rc=$?
	chk "--mem gpu on rxe0 (fakecuda): refused (exit $rc), naming dma-buf and nvidia-peermem" \
		bash -c '[ "$1" -ne 0 ] && [ "$1" -ne 124 ] && grep -qi dma-buf <<<"$2" && grep -qi peermem <<<"$2"' _ $rc "$out"
	echo "$out" | head -2 | sed 's/^/#   /'

	# client/server: one run served, both sides exit 0
	await c-ready 600
	# (no timeout(1) around the servers: the kill below must reach gpup2p itself; a watchdog instead)
	"$B" bench rdma --server --bind "$IP" --device rxe0 --timeout $T >"$J/srv1.out" 2>"$J/srv1.err" &
	pid=$!
	(sleep 200 && kill -9 $pid) 2>/dev/null &
	signal srv1
	wait $pid
	rc=$?
	chk "server --timeout $T: served the client's run, exit 0" [ $rc -eq 0 ]
	[ $rc -eq 0 ] || sed 's/^/#   /' "$J/srv1.err" | head -5
	await cli1 300

	# again, killed (SIGKILL: no goodbye to the client) while the client runs
	"$B" bench rdma --server --bind "$IP" --device rxe0 --timeout $T >"$J/srv2.out" 2>"$J/srv2.err" &
	pid=$!
	(sleep 300 && kill -9 $pid) 2>/dev/null &
	signal srv2
	await cli2 300
	sleep 3
	kill -9 $pid 2>/dev/null
	signal killed
	wait $pid 2>/dev/null
fi
exit 0 # the results are the ok/not ok lines (check.sh reads exit 2 as a guest that did not finish)
