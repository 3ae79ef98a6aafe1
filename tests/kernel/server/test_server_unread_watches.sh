#!/bin/sh
# A hundred watches of a 300-pod namespace that a read-only client opens and
# never reads: each fills one bounded buffer from range scans of the store
# and parks, so /healthz answers within its 5 s deadline, a write is served,
# and once the client leaves the server goes idle (no CPU kept busy
# producing what nobody reads).  Twice: the API server alone
# (--no-scheduling), and with the scheduling loop, whose writes (the 300
# pods' PodScheduled conditions and Events) commit while the watches read:
# a watch never waits for a commit, so /healthz does not wait with it.
. "$PODKERNEL_SRC/tests/kernel/server/lib.sh"
need python3
H="python3 $PODKERNEL_SRC/tests/kernel/server/hostile.py"
cat >"$WORK/tokens" <<'T'
admintok,admin,1,"system:masters"
readtok,reader,2,
T
pk_start "$WORK/data" --token-auth-file "$WORK/tokens" --no-scheduling
$H "$PK_PORT" "$PK_PID" unread-namespaced-watches 100 big 300 readtok ||
	fail "unread namespaced watches, API server alone"
pk_stop
pk_start "$WORK/data2" --token-auth-file "$WORK/tokens"
$H "$PK_PORT" "$PK_PID" unread-namespaced-watches 100 big 300 readtok ||
	fail "unread namespaced watches, with the scheduling loop"
pk_stop
echo "test_server_unread_watches: ok"
