#!/bin/sh
# Slowloris cannot empty a node: while sockets trickling header bytes keep
# the connection cap full, a node whose Lease renewals stop (they may be
# what could not get through) is not declared lost, and its pod stays.  Once
# the server has been able to serve everyone for the grace period, the still
# silent node is declared lost and its pod evicted: the gate holds loss back,
# it does not hide it.
. "$PODKERNEL_SRC/tests/kernel/server/lib.sh"
need curl
need python3
H="python3 $PODKERNEL_SRC/tests/kernel/server/hostile.py"

cat >"$WORK/tokens" <<'T'
admintok,admin,1,"system:masters"
T
pk_start "$WORK/data" --token-auth-file "$WORK/tokens" --max-connections 100 \
	--node-monitor-grace-period 4 -v 2
PK_URL="http://127.0.0.1:$PK_PORT"
A="Authorization: Bearer admintok"
J="Content-Type: application/json"

expect 201 POST /api/v1/nodes -H "$A" -H "$J" -d '{"apiVersion":"v1","kind":"Node",
	"metadata":{"name":"n1"},"status":{"allocatable":{"cpu":"8","pods":"10"}}}'
expect 201 POST /api/v1/namespaces/default/pods -H "$A" -H "$J" -d '{"apiVersion":"v1",
	"kind":"Pod","metadata":{"name":"p"},"spec":{"nodeName":"n1",
	"containers":[{"name":"c","image":"x"}]}}'

# 120 trickling sockets against a cap of 100 for 9 s (more than twice the
# grace).  Once they fill the cap, n1's Lease is created (its first and
# last heartbeat: a Node is monitored from its Lease on); at the end of the
# flood its pod must still be there.
PK_NODE_LEASE=n1 PK_MUST_EXIST=/api/v1/namespaces/default/pods/p \
	$H "$PK_PORT" "$PK_PID" slowloris 60 2 9 30 || fail "slowloris"
grep -q "node-loss monitor: .*saturated" "$PK_LOG" || fail "the monitor did not say why it held back"

# The flood is over: after the grace the silent node is lost, its pod evicted.
i=0
while [ "$(code GET /api/v1/namespaces/default/pods/p -H "$A")" = 200 ]; do
	i=$((i + 1))
	[ $i -lt 300 ] || fail "n1's pod was not evicted after the flood"
	sleep 0.1
done
grep -q "node n1: no heartbeat" "$PK_LOG" || fail "n1 was not declared lost after the flood"
pk_stop
echo "test_server_slowloris_nodes: ok"
