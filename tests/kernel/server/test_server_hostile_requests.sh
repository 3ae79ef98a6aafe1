#!/bin/sh
# podkerneld against hostile requests (loopback only, bounded): unread watches
# over a large object, query arguments past any fixed table, boolean
# spellings, bearer parsing, starting without authentication off loopback,
# and the bodies that cost more than their bytes (protobuf amplification,
# duplicate-key warnings, a Content-Type that is not the body's) as each kind
# of user: admin, a node on its own Node, a reader.
. "$PODKERNEL_SRC/tests/kernel/server/lib.sh"
need curl
need python3
H="python3 $PODKERNEL_SRC/tests/kernel/server/hostile.py"

cat >"$WORK/tokens" <<'T'
admintok,admin,1,"system:masters"
node1tok,system:node:n1,2,"system:nodes"
viewtok,viewer,3
T
# The sanitizer's quarantine would hide what the server frees: RSS must show it.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0:malloc_context_size=2" \
	pk_start "$WORK/data" --token-auth-file "$WORK/tokens"
PK_URL="http://127.0.0.1:$PK_PORT"
A="Authorization: Bearer admintok"
J="Content-Type: application/json"

# 6. 300 watches that never read, over a 1.4 MB pod: each buffers a bounded
# amount (the rest waits in the store), so memory stays bounded and other
# requests are served.
python3 - "$WORK/big.json" <<'PY'
import json, sys
pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "big"},
       "spec": {"containers": [{"name": "c", "image": "busybox", "args": ["x" * 100000] * 14}]}}
open(sys.argv[1], "w").write(json.dumps(pod))
PY
expect 201 POST /api/v1/namespaces/default/pods -H "$A" -H "$J" --data-binary @"$WORK/big.json"
$H "$PK_PORT" "$PK_PID" unread-watches 300 "/api/v1/namespaces/default/pods?watch=1" ||
	fail "unread watches"

# 8. Query arguments are never dropped: a labelSelector after 70 other
# arguments still filters, and too many arguments are refused.
POD='{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1","labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"busybox"}]}}'
expect 201 POST /api/v1/namespaces/default/pods -H "$A" -H "$J" -d "$POD"
q=""
i=0
while [ $i -lt 70 ]; do q="${q}x$i=1&"; i=$((i + 1)); done
expect 200 GET "/api/v1/namespaces/default/pods?${q}labelSelector=app%3Dnone" -H "$A"
grep -q '"p1"' "$WORK/body" && fail "a labelSelector after 70 arguments was ignored"
while [ $i -lt 300 ]; do q="${q}x$i=1&"; i=$((i + 1)); done
expect 400 GET "/api/v1/namespaces/default/pods?${q}labelSelector=app%3Dnone" -H "$A"
grep -q 'too many query parameters' "$WORK/body" || fail "no reason for 400"

# 10. Boolean query arguments as Go's strconv.ParseBool spells them.
for v in True true 1 t; do
	$H "$PK_PORT" "$PK_PID" watch-true "/api/v1/namespaces/default/pods?watch=$v" ||
		fail "watch=$v"
done
expect 200 GET "/api/v1/namespaces/default/pods?watch=False" -H "$A"
grep -q '"kind":"PodList"' "$WORK/body" || fail "watch=False did not list"
expect 400 GET "/api/v1/namespaces/default/pods?watch=yes" -H "$A"

# 14. Bodies that cost more than their bytes, as each kind of user.  A
# protobuf Node status of 1.4 M empty conditions (2.8 MB, about a gigabyte
# once unpacked) is 413 before it is decoded; a reader gets 403 before its
# body is read.
expect 201 POST /api/v1/nodes -H "$A" -H "$J" -d '{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"}}'
PK_TOKEN=node1tok $H "$PK_PORT" "$PK_PID" proto-amplify n1 1400000 413 || fail "protobuf amplification (node)"
PK_TOKEN=admintok $H "$PK_PORT" "$PK_PID" proto-amplify n1 1400000 413 || fail "protobuf amplification (admin)"
PK_TOKEN=viewtok $H "$PK_PORT" "$PK_PID" proto-amplify n1 1400000 403 || fail "protobuf amplification (reader)"
# 20000 duplicate keys under fieldValidation=Warn: answered, the warnings
# capped at 4 KiB and the rest counted.
PK_TOKEN=admintok $H "$PK_PORT" "$PK_PID" dup-warnings POST /api/v1/namespaces/default/pods \
	application/json 20000 201 || fail "duplicate-key warnings (admin)"
PK_TOKEN=node1tok $H "$PK_PORT" "$PK_PID" dup-warnings PUT /api/v1/nodes/n1 \
	application/json 20000 200 || fail "duplicate-key warnings (node)"
PK_TOKEN=node1tok $H "$PK_PORT" "$PK_PID" dup-warnings PATCH /api/v1/nodes/n1 \
	application/merge-patch+json 20000 200 || fail "duplicate-key warnings (node, patch)"
PK_TOKEN=viewtok $H "$PK_PORT" "$PK_PID" dup-warnings PUT /api/v1/nodes/n1 \
	application/json 20000 403 || fail "duplicate-key warnings (reader)"

# A Content-Type the body is not: 415, as each kind of user (a reader's 403
# comes first).
NODEY=$(printf 'apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n')
expect 415 POST /api/v1/namespaces/default/pods -H "$A" -H "Content-Type: text/plain" -d "$POD"
expect 415 PUT /api/v1/nodes/n1 -H "$A" -H "$J" --data-binary "$NODEY"
expect 415 PUT /api/v1/nodes/n1 -H "Authorization: Bearer node1tok" -H "$J" --data-binary "$NODEY"
expect 415 PATCH /api/v1/nodes/n1 -H "Authorization: Bearer node1tok" \
	-H "Content-Type: application/merge-patch+json" --data-binary 'metadata: {labels: {a: b}}'
expect 403 PUT /api/v1/nodes/n1 -H "Authorization: Bearer viewtok" -H "$J" --data-binary "$NODEY"
expect 200 PUT /api/v1/nodes/n1 -H "Authorization: Bearer node1tok" \
	-H "Content-Type: application/yaml" --data-binary "$NODEY"

# 12. "Bearer" and the token are separated by exactly one space.
expect 401 GET /api/v1/pods -H "Authorization: Bearer  admintok"
expect 200 GET /api/v1/pods -H "Authorization: Bearer admintok"

pk_stop

# 2. Off loopback, no token file means everyone is admin: refused (TLS or not)
# unless explicitly allowed.
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$WORK/key.pem" -out "$WORK/cert.pem" \
	-days 1 -subj /CN=podkerneld >/dev/null 2>&1 || fail "openssl"
"$PODKERNEL_BIN/podkerneld" --listen 0.0.0.0:0 --data-dir "$WORK/d2" \
	--tls-cert-file "$WORK/cert.pem" --tls-private-key-file "$WORK/key.pem" 2>"$WORK/refused"
[ $? = 2 ] || fail "TLS without a token file on 0.0.0.0 not refused as bad usage"
grep -q 'without authentication' "$WORK/refused" || fail "no refusal message"

echo "test_server_hostile_requests: ok"
