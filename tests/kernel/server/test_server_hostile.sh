#!/bin/sh
# podkerneld against hostile connections (loopback only, bounded in
# connections and time; 127.0.0.2.. stand for other client addresses): idle
# and half-sent connection floods, anonymous bodies.  The request-level attacks
# are in test_server_hostile_requests.sh.  Also: bodies a user may not send
# are refused before they are read, a writer's bodies in flight are capped,
# and a patch whose copy ops double the object is refused at the limit.
. "$PODKERNEL_SRC/tests/kernel/server/lib.sh"
need curl
need python3
H="python3 $PODKERNEL_SRC/tests/kernel/server/hostile.py"

cat >"$WORK/tokens" <<'T'
admintok,admin,1,"system:masters"
viewtok,viewer,2
n1tok,system:node:n1,3,"system:nodes"
T
# The sanitizer's quarantine would hide what the server frees: RSS must show it.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0:malloc_context_size=2" \
	pk_start "$WORK/data" --token-auth-file "$WORK/tokens"
PK_URL="http://127.0.0.1:$PK_PORT"
A="Authorization: Bearer admintok"
J="Content-Type: application/json"

# 1. Idle connections: 250 half-sent requests from one address (50 over its
# limit: as many of the oldest give way at once) and 800 more from four others; /healthz stays served
# and every half-sent request is closed after the idle timeout.
$H "$PK_PORT" "$PK_PID" idle-flood 250 1 0 || fail "flood from one address"
$H "$PK_PORT" "$PK_PID" idle-flood 200 5 10 || fail "flood from five addresses"

# 5. Bodies are not read before authentication.
$H "$PK_PORT" "$PK_PID" anonymous-bodies 100 3000000 || fail "anonymous bodies"
# A declared body over the limit is refused before it is sent, too.
expect 413 POST /api/v1/namespaces/default/pods -H "$A" -H "$J" -H "Content-Length: 99999999" \
	-H "Expect:" --data-binary ""

# 6. A user who may not write is refused before the body too (403): 300
# connections declaring 3 MB each cost nothing.
$H "$PK_PORT" "$PK_PID" read-only-bodies 300 3000000 viewtok || fail "read-only bodies"
# A writer's bodies in flight are capped (32 MiB per user): 100 declared
# 3 MB bodies sent slowly, most answered 429 before their bytes are read.
$H "$PK_PORT" "$PK_PID" writer-bodies 100 3000000 || fail "writer bodies"

# 7. A node's 26 doubling copy ops on its own Node status: 413, fast.
expect 201 POST /api/v1/nodes -H "$A" -H "$J" -d '{"apiVersion":"v1","kind":"Node",
	"metadata":{"name":"n1"},"status":{"allocatable":{"cpu":"1"}}}'
PK_TOKEN=n1tok $H "$PK_PORT" "$PK_PID" patch-bomb n1 || fail "patch bomb"

pk_stop
echo "test_server_hostile: ok"
