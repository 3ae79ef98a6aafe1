#!/bin/sh
# Slowloris against podkerneld (loopback only, bounded): sockets that trickle
# header bytes from five addresses overfill a small connection cap and are
# reopened as soon as they are closed.  A client sending whole requests is
# served throughout, no trickling socket outlives the header deadline, and
# past the cap a new connection is closed at once instead of waiting in the
# backlog.
. "$PODKERNEL_SRC/tests/kernel/server/lib.sh"
need python3
H="python3 $PODKERNEL_SRC/tests/kernel/server/hostile.py"

cat >"$WORK/tokens" <<'T'
admintok,admin,1,"system:masters"
T
pk_start "$WORK/data" --token-auth-file "$WORK/tokens" --max-connections 300 \
	--max-connections-per-address 100 --request-header-timeout 2
PK_URL="http://127.0.0.1:$PK_PORT"

# 100 trickling sockets under the cap for 5 s: each closed at the deadline.
$H "$PK_PORT" "$PK_PID" slowloris 50 2 5 2 || fail "slowloris under the cap"
curl -s "$PK_URL/metrics" -H "Authorization: Bearer admintok" >"$WORK/metrics"
grep -q 'podkernel_listener_closed_total{listener="api",reason="header_deadline"} [1-9]' \
	"$WORK/metrics" || fail "no header-deadline closes counted: $(grep pk_listener "$WORK/metrics")"
# 400 (5 addresses x 80) for 6 s against the cap of 300: the oldest give way.
$H "$PK_PORT" "$PK_PID" slowloris 80 5 6 2 || fail "slowloris over the cap"
curl -s "$PK_URL/metrics" -H "Authorization: Bearer admintok" >"$WORK/metrics"
grep -q 'podkernel_listener_closed_total{listener="api",reason="displaced"} [1-9]' \
	"$WORK/metrics" || fail "no displacement counted: $(grep pk_listener "$WORK/metrics")"
pk_stop

# 20 watches fill a cap of 20: the 21st connection is closed at once.
pk_start "$WORK/data" --token-auth-file "$WORK/tokens" --max-connections 20
$H "$PK_PORT" "$PK_PID" cap-closes 20 || fail "past the cap"
pk_stop
echo "test_server_slowloris: ok"
