#!/bin/sh
# podkerneld's Kubernetes semantics that clients and attackers rely on, over
# curl: size limits with field paths, NodeRestriction on a node's own Node,
# dryRun on every write (query and DeleteOptions), preconditions, the
# resourceVersion rules of list and watch, routes that must not answer,
# version.Info, the token file's quirks, /readyz while writes fail, and exit
# codes for bad input.
. "$PODKERNEL_SRC/tests/kernel/server/lib.sh"
need curl
need python3

cat >"$WORK/tokens" <<'T'
admintok,admin,1,"system:masters"
node1tok,system:node:n1,2,"system:nodes",fifth-column-ignored
node2tok,system:node:n2,6,"system:nodes"
viewtok,viewer,3
dup,first,4
dup,second,5,"system:masters"
T
pk_start "$WORK/data" --token-auth-file "$WORK/tokens"
PK_URL="http://127.0.0.1:$PK_PORT"
A="Authorization: Bearer admintok"
N="Authorization: Bearer node1tok"
J="Content-Type: application/json"
M="Content-Type: application/merge-patch+json"
POD='{"apiVersion":"v1","kind":"Pod","metadata":{"name":"NAME","labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"busybox"}]}}'
pod() { echo "$POD" | sed "s/NAME/$1/"; }
has() { grep -q "$1" "$WORK/body" || fail "expected $1 in: $(head -c 400 "$WORK/body")"; }
hasnt() { grep -q "$1" "$WORK/body" && fail "unexpected $1 in: $(head -c 400 "$WORK/body")"; true; }
# big FILE BYTES [ARGS]: a pod whose annotation (or container args) hold BYTES of text.
big() {
	python3 - "$@" <<'PY'
import json, sys
path, n, where = sys.argv[1], int(sys.argv[2]), sys.argv[3]
pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "big"},
       "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
if where == "annotation":
    pod["metadata"]["annotations"] = {"a": "x" * n}
else:
    pod["spec"]["containers"][0]["args"] = ["x" * 100000] * (n // 100000)
open(path, "w").write(json.dumps(pod))
PY
}

# 12. The token file: a fifth column is ignored, a repeated token's last line
# wins (with a warning in the log).
expect 200 GET /api/v1/nodes -H "$N"
grep -q 'tokens:6: duplicate token (also on line 5)' "$PK_LOG" || fail "no duplicate token warning"
expect 201 POST /api/v1/namespaces/default/pods -H "Authorization: Bearer dup" -H "$J" -d "$(pod p0)"

# 3. Size limits: annotations over 256 KiB are 422 with the field path, an
# object over 1.5 MiB is 413; neither is stored.
big "$WORK/ann.json" 300000 annotation
expect 422 POST /api/v1/namespaces/default/pods -H "$A" -H "$J" --data-binary @"$WORK/ann.json"
has '"field":"metadata.annotations"'
big "$WORK/huge.json" 1700000 args
expect 413 POST /api/v1/namespaces/default/pods -H "$A" -H "$J" --data-binary @"$WORK/huge.json"
expect 404 GET /api/v1/namespaces/default/pods/big -H "$A"

# 4. NodeRestriction: a node registers itself with kubelet labels and taints,
# but not with restricted labels; later it may not touch taints, cordon,
# ownerReferences or restricted labels.
NODE='{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1","labels":{LABELS}},"spec":{"taints":[{"key":"boot","effect":"NoSchedule"}]}}'
node() { echo "$NODE" | sed "s|LABELS|$1|"; }
expect 403 POST /api/v1/nodes -H "$N" -H "$J" -d "$(node '"node-restriction.kubernetes.io/pool":"gold"')"
has 'node-restriction.kubernetes.io/pool'
expect 403 POST /api/v1/nodes -H "$N" -H "$J" -d "$(node '"kubernetes.io/role":"master"')"
expect 403 POST /api/v1/nodes -H "$N" -H "$J" -d "$(node '"node-role.kubernetes.io/control-plane":""')"
expect 201 POST /api/v1/nodes -H "$N" -H "$J" \
	-d "$(node '"kubernetes.io/hostname":"n1","node.kubernetes.io/instance-type":"x","example.com/rack":"r1"')"
# The admin cordons it, taints it and restricts it.
expect 200 PATCH /api/v1/nodes/n1 -H "$A" -H "$M" \
	-d '{"metadata":{"labels":{"node-restriction.kubernetes.io/pool":"gold"}},"spec":{"unschedulable":true,"taints":[{"key":"boot","effect":"NoSchedule"},{"key":"admin","effect":"NoExecute"}]}}'
expect 403 PATCH /api/v1/nodes/n1 -H "$N" -H "$M" -d '{"spec":{"taints":null}}'
has 'spec.taints'
expect 403 PATCH /api/v1/nodes/n1 -H "$N" -H "$M" -d '{"spec":{"unschedulable":false}}'
expect 403 PATCH /api/v1/nodes/n1 -H "$N" -H "$M" \
	-d '{"metadata":{"labels":{"node-restriction.kubernetes.io/pool":null}}}'
expect 403 PATCH /api/v1/nodes/n1 -H "$N" -H "$M" -d '{"metadata":{"labels":{"kubernetes.io/role":"x"}}}'
expect 403 PATCH /api/v1/nodes/n1 -H "$N" -H "Content-Type: application/json-patch+json" -d '[{"op":"remove","path":"/spec/taints/1"}]'
expect 403 PATCH /api/v1/nodes/n1 -H "$N" -H "$M" \
	-d '{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"Namespace","name":"x","uid":"u"}]}}'
# PUT is held to the same rules.
expect 200 GET /api/v1/nodes/n1 -H "$N"
sed 's/"unschedulable":true/"unschedulable":false/' "$WORK/body" >"$WORK/n1.json"
expect 403 PUT /api/v1/nodes/n1 -H "$N" -H "$J" --data-binary @"$WORK/n1.json"
# Server-side apply is judged on the object it produces, as merge patch and
# PUT are: on update and when it creates the Node.
Y="Content-Type: application/apply-patch+yaml"
AP="/api/v1/nodes/n1?fieldManager=kubelet&force=true"
expect 403 PATCH "$AP" -H "$N" -H "$Y" -d '{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"},"spec":{"taints":[{"key":"mine","effect":"NoSchedule"}]}}'
has 'spec.taints'
expect 403 PATCH "$AP" -H "$N" -H "$Y" -d '{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"},"spec":{"unschedulable":false}}'
expect 403 PATCH "$AP" -H "$N" -H "$Y" 	-d '{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1","labels":{"node-restriction.kubernetes.io/pool":"x"}}}'
expect 403 PATCH "$AP" -H "$N" -H "$Y" 	-d '{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1","labels":{"kubernetes.io/role":"x"}}}'
expect 403 PATCH "$AP" -H "$N" -H "$Y" 	-d '{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1","ownerReferences":[{"apiVersion":"v1","kind":"Namespace","name":"x","uid":"u"}]}}'
expect 403 PATCH "$AP" -H "$N" -H "$Y" -d '{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"},"spec":{"configSource":{"configMap":{"name":"c"}}}}'
N2="Authorization: Bearer node2tok"
expect 403 PATCH "/api/v1/nodes/n2?fieldManager=kubelet" -H "$N2" -H "$Y" 	-d '{"apiVersion":"v1","kind":"Node","metadata":{"name":"n2","labels":{"node-restriction.kubernetes.io/pool":"gold"}}}'
has 'node-restriction.kubernetes.io/pool'
expect 404 GET /api/v1/nodes/n2 -H "$A"
expect 403 PATCH "/api/v1/nodes/n1?fieldManager=kubelet" -H "$N2" -H "$Y" -d '{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"}}'
expect 201 PATCH "/api/v1/nodes/n2?fieldManager=kubelet" -H "$N2" -H "$Y" 	-d '{"apiVersion":"v1","kind":"Node","metadata":{"name":"n2","labels":{"example.com/rack":"r9"}}}'
# Applied to the status subresource, only status is written.
expect 200 PATCH "/api/v1/nodes/n2/status?fieldManager=kubelet" -H "$N2" -H "$Y" 	-d '{"apiVersion":"v1","kind":"Node","metadata":{"name":"n2","labels":{"node-restriction.kubernetes.io/pool":"gold"}},"spec":{"unschedulable":true},"status":{"phase":"Running"}}'
expect 200 GET /api/v1/nodes/n2 -H "$A"
has '"phase":"Running"'
hasnt 'node-restriction'
hasnt 'unschedulable'
# A create is authorised on the name its body decodes to, and an apply
# creates only in a namespace that exists.
expect 403 POST /api/v1/nodes -H "$N" -H "Content-Type: application/yaml" 	--data-binary "$(printf 'apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  name: n9\n')"
expect 404 GET /api/v1/nodes/n9 -H "$A"
expect 404 PATCH "/api/v1/namespaces/nope/pods/p9?fieldManager=m" -H "$A" -H "$Y" -d "$(pod p9)"
has 'namespaces \\"nope\\" not found'
# What a kubelet does keep doing: its own labels, annotations and status.
expect 200 PATCH /api/v1/nodes/n1 -H "$N" -H "$M" \
	-d '{"metadata":{"labels":{"example.com/rack":"r2","feature.node.kubernetes.io/x":"1"}}}'
expect 200 PATCH /api/v1/nodes/n1/status -H "$N" -H "$M" -d '{"status":{"phase":"Running"}}'
expect 200 GET /api/v1/nodes/n1 -H "$A"
has '"unschedulable":true'
has '"key":"admin"'
has '"node-restriction.kubernetes.io/pool":"gold"'

# 9. dryRun: validation and rules run, nothing is written, on every verb.
rv0=$(code GET /api/v1/namespaces/default/pods -H "$A" >/dev/null; rv_of "$WORK/body")
expect 201 POST "/api/v1/namespaces/default/pods?dryRun=All" -H "$A" -H "$J" -d "$(pod dry)"
has '"uid"'
expect 404 GET /api/v1/namespaces/default/pods/dry -H "$A"
expect 422 POST "/api/v1/namespaces/default/pods?dryRun=All" -H "$A" -H "$J" -d "$(pod Bad_Name)"
expect 400 POST "/api/v1/namespaces/default/pods?dryRun=Yes" -H "$A" -H "$J" -d "$(pod dry)"
# ... also after 70 other arguments (they used to be dropped).
q=""
i=0
while [ $i -lt 70 ]; do q="${q}x$i=1&"; i=$((i + 1)); done
expect 201 POST "/api/v1/namespaces/default/pods?${q}dryRun=All" -H "$A" -H "$J" -d "$(pod dry)"
expect 404 GET /api/v1/namespaces/default/pods/dry -H "$A"
expect 201 POST /api/v1/namespaces/default/pods -H "$A" -H "$J" -d "$(pod p1)"
uid=$(grep -o '"uid":"[^"]*"' "$WORK/body" | head -1 | cut -d'"' -f4)
expect 200 PATCH "/api/v1/namespaces/default/pods/p1?dryRun=All" -H "$A" -H "$M" \
	-d '{"metadata":{"labels":{"tier":"dry"}}}'
has '"tier":"dry"'
expect 200 GET /api/v1/namespaces/default/pods/p1 -H "$A"
hasnt '"tier"'
sed 's/"app":"web"/"app":"dry"/' "$WORK/body" >"$WORK/p1.json"
expect 200 PUT "/api/v1/namespaces/default/pods/p1?dryRun=All" -H "$A" -H "$J" --data-binary @"$WORK/p1.json"
expect 200 DELETE "/api/v1/namespaces/default/pods/p1?dryRun=All" -H "$A"
expect 200 DELETE /api/v1/namespaces/default/pods/p1 -H "$A" -H "$J" \
	-d '{"kind":"DeleteOptions","apiVersion":"v1","dryRun":["All"]}'
expect 200 GET /api/v1/namespaces/default/pods/p1 -H "$A"
has '"app":"web"'

# 12. Preconditions and identity: a wrong preconditions.uid is 409, so is a
# PATCH that changes metadata.uid; the right uid deletes.
expect 409 DELETE /api/v1/namespaces/default/pods/p1 -H "$A" -H "$J" \
	-d '{"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"uid":"wrong"}}'
has 'Precondition failed: UID in precondition: wrong'
expect 409 PATCH /api/v1/namespaces/default/pods/p1 -H "$A" -H "$M" -d '{"metadata":{"uid":"forged"}}'
expect 200 GET /api/v1/namespaces/default/pods/p1 -H "$A"
has "\"uid\":\"$uid\""

# 12. Routes that must not answer: create outside a namespace, get without one.
expect 405 POST /api/v1/pods -H "$A" -H "$J" -d "$(pod nons)"
expect 404 GET /api/v1/pods/p1 -H "$A"
expect 404 GET /api/v1/namespaces/default/pods/nons -H "$A"

# 12. resourceVersion rules.
cur=$(code GET /api/v1/namespaces/default/pods -H "$A" >/dev/null; rv_of "$WORK/body")
[ "$cur" -gt "$rv0" ] || fail "no write between $rv0 and $cur"
expect 400 GET "/api/v1/namespaces/default/pods?resourceVersion=abc" -H "$A"
# ListOptions that kube-apiserver refuses are 422 Invalid (test_router.c has the table).
expect 422 GET "/api/v1/namespaces/default/pods?resourceVersionMatch=Exact" -H "$A"
expect 422 GET "/api/v1/namespaces/default/pods?resourceVersion=$cur&resourceVersionMatch=Sometimes" -H "$A"
expect 200 GET "/api/v1/namespaces/default/pods?resourceVersion=$cur&resourceVersionMatch=Exact" -H "$A"
expect 410 GET "/api/v1/namespaces/default/pods?resourceVersion=$rv0&resourceVersionMatch=Exact" -H "$A"
expect 504 GET "/api/v1/namespaces/default/pods?resourceVersion=$((cur + 1000))" -H "$A"
expect 504 GET "/api/v1/namespaces/default/pods?watch=1&resourceVersion=$((cur + 1000))" -H "$A"
has 'Too large resource version'
expect 400 GET "/api/v1/namespaces/default/pods?watch=1&resourceVersion=abc" -H "$A"
# A single-object watch whose name is no selector streams that name only.
: >"$WORK/w"
curl -s -m 3 -o "$WORK/w" "$PK_URL/api/v1/namespaces/default/pods/a,b?watch=1" -H "$A"
grep -q '"p1"' "$WORK/w" && fail "a watch of pods/a,b streamed other pods"
curl -s -m 3 -o "$WORK/w" "$PK_URL/api/v1/namespaces/default/pods/p1?watch=1" -H "$A"
grep -q '"name":"p1"' "$WORK/w" || fail "a watch of pods/p1 did not stream p1"

# 11. version.Info carries every field.
expect 200 GET /version
for f in major minor gitVersion gitCommit gitTreeState buildDate goVersion compiler platform; do
	has "\"$f\""
done

# 12. A deleted token file is logged; the tokens loaded last stay in force.
rm "$WORK/tokens"
expect 200 GET /api/v1/nodes -H "$A"
sleep 1.1
expect 200 GET /api/v1/nodes -H "$A"
grep -q "token file $WORK/tokens: No such file or directory" "$PK_LOG" || fail "deleted token file not logged"
pk_stop

# 13. /readyz is not ready while writes fail: a file size limit makes the
# store's writes fail as a full disk would.
(
	trap '' XFSZ
	ulimit -f 8192
	exec "$PODKERNEL_BIN/podkerneld" --listen 127.0.0.1:0 --data-dir "$WORK/data3" 2>"$WORK/full.log"
) &
PK_PID=$!
PK_PIDS="$PK_PIDS $PK_PID"
PK_LOG="$WORK/full.log"
i=0
while [ $i -lt 100 ] && ! grep -q '(port ' "$PK_LOG"; do sleep 0.1; i=$((i + 1)); done
PK_PORT=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$PK_LOG" | head -1)
PK_URL="http://127.0.0.1:$PK_PORT"
expect 200 GET /readyz
big "$WORK/ann.json" 250000 annotation
failed=0
i=0
while [ $i -lt 60 ] && [ $failed = 0 ]; do
	c=$(code POST /api/v1/namespaces/default/pods -H "$J" \
		--data-binary @"$WORK/ann.json" | tail -c 3)
	[ "$c" = 500 ] && failed=1
	sed -i "s/\"name\": \"big[0-9]*\"/\"name\": \"big$i\"/" "$WORK/ann.json"
	i=$((i + 1))
done
[ $failed = 1 ] || fail "writes never failed under an 8 MiB file size limit"
expect 500 GET /readyz
has 'store failed'
expect 200 GET /healthz
kill -TERM "$PK_PID"
wait "$PK_PID"

# 13. Bad input exits 2: TLS files that are not PEM, a directory as -f.
echo "not a certificate" >"$WORK/bad.pem"
"$PODKERNEL_BIN/podkerneld" --listen 127.0.0.1:0 --data-dir "$WORK/d4" \
	--tls-cert-file "$WORK/bad.pem" --tls-private-key-file "$WORK/bad.pem" 2>"$WORK/tls.err"
[ $? = 2 ] || fail "bad TLS files did not exit 2: $(cat "$WORK/tls.err")"
"$PODKERNEL_BIN/podkerneld" --listen 127.0.0.1:0 --data-dir "$WORK/d4" \
	--tls-cert-file "$WORK/missing.pem" --tls-private-key-file "$WORK/missing.pem" 2>"$WORK/tls.err"
[ $? = 2 ] || fail "missing TLS files did not exit 2: $(cat "$WORK/tls.err")"
for cmd in validate compile apply; do
	"$PODKERNEL_BIN/podctl" $cmd -f "$WORK" >/dev/null 2>"$WORK/dir.err"
	rc=$?
	[ $rc = 2 ] || fail "podctl $cmd -f DIRECTORY exited $rc, want 2: $(cat "$WORK/dir.err")"
	grep -q 'is a directory' "$WORK/dir.err" || fail "podctl $cmd -f DIRECTORY: no reason"
done

echo "test_server_semantics: ok"
