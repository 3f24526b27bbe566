#!/bin/bash
# Runs in both guests of the pair (topo-pair0.args: server, topo-pair1.args: client), joined by a
# virtual Ethernet link, soft-RoCE on each: the harness's sanity check, RC ping-pong across the link.
# The guests meet through files in each other's workspace (signal/await in rxe.sh).
set -u
. tests/vm/rxe.sh
pair_args
rxe_up "$IP/24"
J=$GPUP2P_VM_WS
chk "$ROLE: rxe0 ACTIVE over $nd ($IP), RoCE v2 GID index '$gidx'" \
	bash -c "rdma link show rxe0/1 | grep -q 'state ACTIVE' && [ -n '$gidx' ]"
peer_gid="::ffff:$PEER"
if [ "$ROLE" = server ]; then
	timeout 400 ibv_rc_pingpong -d rxe0 -g "$gidx" -n 500 >"$J/pp.txt" 2>&1 &
	pid=$!
	signal pp-ready
	wait "$pid"
	rc=$?
else
	await pp-ready 400
	sleep 1
	# the server may still be opening its device: a refused connection is tried again
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		timeout 120 ibv_rc_pingpong -d rxe0 -g "$gidx" -n 500 "$PEER" >"$J/pp.txt" 2>&1
		rc=$?
		[ $rc -eq 0 ] && break
		grep -q "Couldn't connect" "$J/pp.txt" || break
		sleep 2
	done
fi
chk "$ROLE: ibv_rc_pingpong across the link: exit 0, 500 iterations, the peer's GID $peer_gid" \
	bash -c "[ $rc -eq 0 ] && grep -q '^500 iters' '$J/pp.txt' && grep -q 'remote address: .* GID $peer_gid\$' '$J/pp.txt'"
[ $rc -eq 0 ] || sed 's/^/#   /' "$J/pp.txt"
grep -h "bytes in\|iters in" "$J/pp.txt" | sed "s/^/# $ROLE: /"
exit 0
