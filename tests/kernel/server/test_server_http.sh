#!/bin/sh
# podkerneld over plain HTTP with curl: every verb, conflicts, paging,
# selectors, watch resumption and 410 after a restart, malformed and
# oversized bodies, missing and wrong tokens, NodeRestriction, metrics, the
# workload builder's admission of Jobs.
. "$PODKERNEL_SRC/tests/kernel/server/lib.sh"
need curl

cat >"$WORK/tokens" <<'T'
admintok,admin,1,"system:masters"
node1tok,system:node:n1,2,"system:nodes"
viewtok,viewer,3
T
# An audit log already at its size limit: the first write rotates it.
head -c 1048576 /dev/zero | tr '\0' x >"$WORK/audit.log"
pk_start "$WORK/data" --token-auth-file "$WORK/tokens" -v 2 --audit-log-path "$WORK/audit.log" \
	--audit-log-maxsize 1 --audit-log-maxbackup 1
PK_URL="http://127.0.0.1:$PK_PORT"
A="Authorization: Bearer admintok"
J="Content-Type: application/json"
POD='{"apiVersion":"v1","kind":"Pod","metadata":{"name":"NAME","labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"busybox"}]}}'
pod() { echo "$POD" | sed "s/NAME/$1/"; }

# Public and refused endpoints.
expect 200 GET /healthz
expect 200 GET /readyz
expect 200 GET /version
expect 401 GET /api/v1/pods
expect 401 GET /api/v1/pods -H "Authorization: Bearer nope"
grep -q '"reason":"Unauthorized"' "$WORK/body" || fail "401 without a Status"
expect 200 GET /api/v1/pods -H "Authorization: Bearer viewtok"
expect 403 POST /api/v1/namespaces/default/pods -H "Authorization: Bearer viewtok" -H "$J" -d "$(pod x)"

# create, get, list, update, patch, delete.
expect 201 POST /api/v1/namespaces/default/pods -H "$A" -H "$J" -d "$(pod p1)"
rv1=$(rv_of "$WORK/body")
expect 409 POST /api/v1/namespaces/default/pods -H "$A" -H "$J" -d "$(pod p1)"
grep -q '"reason":"AlreadyExists"' "$WORK/body" || fail "no AlreadyExists"
expect 200 GET /api/v1/namespaces/default/pods/p1 -H "$A"
# Replace with optimistic concurrency, on a kind the scheduling loop never writes.
PC=/apis/scheduling.k8s.io/v1/priorityclasses
expect 201 POST $PC -H "$A" -H "$J" -d '{"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"pc1"},"value":10}'
expect 200 GET $PC/pc1 -H "$A"
sed 's/"value":10/"value":20/' "$WORK/body" >"$WORK/pc1-new.json"
expect 200 PUT $PC/pc1 -H "$A" -H "$J" --data-binary @"$WORK/pc1-new.json"
grep -q '"value":20' "$WORK/body" || fail "update lost"
rv2=$(rv_of "$WORK/body")
[ "$rv2" -gt "$rv1" ] || fail "resourceVersion did not grow ($rv1 -> $rv2)"
# The same stale body again: 409 Conflict.
expect 409 PUT $PC/pc1 -H "$A" -H "$J" --data-binary @"$WORK/pc1-new.json"
grep -q '"reason":"Conflict"' "$WORK/body" || fail "no Conflict"
expect 200 PATCH /api/v1/namespaces/default/pods/p1 -H "$A" \
	-H "Content-Type: application/merge-patch+json" -d '{"metadata":{"labels":{"tier":"a"}}}'
expect 200 PATCH /api/v1/namespaces/default/pods/p1 -H "$A" \
	-H "Content-Type: application/strategic-merge-patch+json" -d '{"metadata":{"labels":{"tier":null}}}'
grep -q '"tier"' "$WORK/body" && fail "strategic merge patch did not delete the label"
expect 200 PATCH /api/v1/namespaces/default/pods/p1 -H "$A" \
	-H "Content-Type: application/json-patch+json" -d '[{"op":"add","path":"/metadata/annotations","value":{"n":"1"}}]'
expect 200 PATCH /api/v1/namespaces/default/pods/p1/status -H "$A" \
	-H "Content-Type: application/merge-patch+json" -d '{"status":{"phase":"Running"}}'
grep -q '"phase":"Running"' "$WORK/body" || fail "status patch lost"
expect 201 POST /api/v1/namespaces/default/pods/p1/binding -H "$A" -H "$J" \
	-d '{"apiVersion":"v1","kind":"Binding","metadata":{"name":"p1"},"target":{"name":"n1"}}'
expect 409 POST /api/v1/namespaces/default/pods/p1/binding -H "$A" -H "$J" \
	-d '{"apiVersion":"v1","kind":"Binding","metadata":{"name":"p1"},"target":{"name":"n2"}}'
expect 200 GET "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1" -H "$A"
grep -q '"name":"p1"' "$WORK/body" || fail "fieldSelector spec.nodeName"
# A NUL byte decoded from the query is refused, not a cut selector ("a" would match).
expect 400 GET "/api/v1/pods?labelSelector=a%00b" -H "$A"
grep -q 'labelSelector: Invalid value' "$WORK/body" || fail "NUL in labelSelector: $(cat "$WORK/body")"
expect 400 GET "/api/v1/pods?watch=1&timeoutSeconds=abc" -H "$A"
grep -q 'timeoutSeconds' "$WORK/body" || fail "timeoutSeconds=abc: $(cat "$WORK/body")"

# Paging and label selectors.
for i in 1 2 3 4 5 6 7; do
	expect 201 POST /api/v1/namespaces/default/pods -H "$A" -H "$J" -d "$(pod q$i)"
done
expect 200 GET "/api/v1/namespaces/default/pods?limit=3" -H "$A"
cont=$(grep -o '"continue":"[0-9a-f]*"' "$WORK/body" | cut -d'"' -f4)
[ -n "$cont" ] || fail "no continue token"
expect 200 GET "/api/v1/namespaces/default/pods?limit=3&continue=$cont" -H "$A"
grep -q '"name":"q3"' "$WORK/body" || fail "second page: $(head -c 300 "$WORK/body")"
expect 200 PATCH /api/v1/namespaces/default/pods/q2 -H "$A" \
	-H "Content-Type: application/merge-patch+json" -d '{"metadata":{"labels":{"app":"api"}}}'
expect 200 GET "/api/v1/pods?labelSelector=app%20in%20(api,x),!tier" -H "$A"
[ "$(grep -o '"kind":"Pod"' "$WORK/body" | wc -l)" = 1 ] || fail "label selector"
grep -q '"name":"q2"' "$WORK/body" || fail "label selector picked the wrong pod"
expect 400 GET "/api/v1/pods?labelSelector=app%20in" -H "$A"

# Watch: resume from a resourceVersion, see the change, then delete.
expect 200 GET /api/v1/namespaces/default/pods -H "$A"
listrv=$(rv_of "$WORK/body")
curl -sN --max-time 3 -H "$A" "$PK_URL/api/v1/namespaces/default/pods?watch=true&resourceVersion=$listrv" \
	>"$WORK/watch" &
wpid=$!
sleep 0.5
expect 200 DELETE /api/v1/namespaces/default/pods/q1 -H "$A"
expect 404 DELETE /api/v1/namespaces/default/pods/q1 -H "$A"
wait $wpid
grep -q '"type":"DELETED".*"name":"q1"' "$WORK/watch" || fail "watch missed the delete: $(cat "$WORK/watch")"
# Resume from before a change: replayed from the ring.
curl -sN --max-time 1 -H "$A" "$PK_URL/api/v1/pods?watch=1&resourceVersion=$rv1" >"$WORK/watch2"
grep -q '"type":"ADDED".*"name":"q7"' "$WORK/watch2" || fail "no replay from $rv1"

# Malformed and oversized bodies; the server keeps serving.
expect 400 POST /api/v1/namespaces/default/pods -H "$A" -H "$J" -d '{"kind": "Pod", '
expect 400 POST /api/v1/namespaces/default/pods -H "$A" -H "$J" -d '[[[[[[[['
expect 422 POST /api/v1/namespaces/default/pods -H "$A" -H "$J" -d "$(pod Bad_Name)"
grep -q '"field":"metadata.name"' "$WORK/body" || fail "no field path in Invalid"
head -c 4000000 /dev/zero | tr '\0' 'a' >"$WORK/big"
expect 413 POST /api/v1/namespaces/default/pods -H "$A" -H "$J" --data-binary @"$WORK/big"
expect 200 GET /healthz

# NodeRestriction.
NODE='{"apiVersion":"v1","kind":"Node","metadata":{"name":"NAME"}}'
expect 201 POST /api/v1/nodes -H "Authorization: Bearer node1tok" -H "$J" -d "$(echo "$NODE" | sed s/NAME/n1/)"
expect 403 POST /api/v1/nodes -H "Authorization: Bearer node1tok" -H "$J" -d "$(echo "$NODE" | sed s/NAME/n2/)"
expect 201 POST /api/v1/nodes -H "$A" -H "$J" -d "$(echo "$NODE" | sed s/NAME/n2/)"
expect 403 PATCH /api/v1/nodes/n2 -H "Authorization: Bearer node1tok" \
	-H "Content-Type: application/merge-patch+json" -d '{"metadata":{"labels":{"x":"y"}}}'
grep -q '"reason":"Forbidden"' "$WORK/body" || fail "no Forbidden"
expect 200 PATCH /api/v1/nodes/n1 -H "Authorization: Bearer node1tok" \
	-H "Content-Type: application/merge-patch+json" -d '{"metadata":{"labels":{"x":"y"}}}'

# CompositePodGroup bottom-up deletion.
G='{"apiVersion":"scheduling.k8s.io/v1alpha3","kind":"KIND","metadata":{"name":"NAME"},"spec":{"workloadRef":{"workloadName":"w","templateName":"NAME"},"schedulingPolicy":{"basic":{}}PARENT}}'
grp() { echo "$G" | sed "s/KIND/$1/; s/NAME/$2/g; s/PARENT/$3/"; }
SG=/apis/scheduling.k8s.io/v1alpha3/namespaces/default
expect 201 POST $SG/compositepodgroups -H "$A" -H "$J" -d "$(grp CompositePodGroup top '')"
grep -q 'scheduling.k8s.io/group-protection' "$WORK/body" || fail "no protection finalizer"
expect 201 POST $SG/podgroups -H "$A" -H "$J" -d "$(grp PodGroup leaf ',"parentCompositePodGroupName":"top"')"
expect 200 DELETE $SG/compositepodgroups/top -H "$A"
grep -q deletionTimestamp "$WORK/body" || fail "parent removed while a child exists"
expect 200 GET $SG/compositepodgroups/top -H "$A"
expect 200 DELETE $SG/podgroups/leaf -H "$A"
expect 404 GET $SG/compositepodgroups/top -H "$A"

# Metrics.
expect 200 GET /metrics -H "$A"
grep -q 'apiserver_request_total{verb="create",resource="pods",subresource="",code="201"}' \
	"$WORK/body" || fail "request metrics without resource and verb"
grep -q 'apiserver_request_total{verb="create",resource="pods",subresource="",code="403"}' \
	"$WORK/body" || fail "a write refused before its body is not counted by resource"
grep -q 'apiserver_request_duration_seconds_count{verb="create",resource="pods",subresource=""} [1-9]' \
	"$WORK/body" || fail "request latency without verb and resource"
for m in process_cpu_seconds_total process_resident_memory_bytes process_open_fds \
	process_start_time_seconds 'podkernel_build_info{version="' podkernel_audit_events_total; do
	grep -q "^$m" "$WORK/body" || fail "no $m"
done
grep -E '^[a-z]' "$WORK/body" | grep -Ev '^(podkernel|process|apiserver|scheduler)_' &&
	fail "a metric outside the podkernel_ prefix and the mirrored names"
# Logs: a timestamp and a level; every request line names its user.
head -1 "$PK_LOG" | grep -Eq '^20[0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-9:]{8}\.[0-9]{3}Z [a-z]+ podkerneld: ' ||
	fail "log line without RFC 3339 time and level: $(head -1 "$PK_LOG")"
grep -q 'request user=viewer verb=create resource=pods namespace=default name=- code=403 ' "$PK_LOG" ||
	fail "no request line for the refused write"
grep -q 'request user=admin verb=delete resource=podgroups namespace=default name=leaf code=200 ' \
	"$PK_LOG" || fail "no request line for the delete"
[ -z "$(grep ' request ' "$PK_LOG" | grep -v ' user=')" ] || fail "a request line without user"
# Audit: the full log went aside once; each write is one audit.k8s.io/v1 Event.
[ "$(wc -c <"$WORK/audit.log.1")" = 1048576 ] || fail "the audit log was not rotated"
[ ! -e "$WORK/audit.log.2" ] || fail "more backups than --audit-log-maxbackup"
python3 - "$WORK/audit.log" <<'PY' || fail "audit events"
import json, sys
evs = [json.loads(l) for l in open(sys.argv[1])]
assert evs and all(e["apiVersion"] == "audit.k8s.io/v1" and e["kind"] == "Event" and
                   e["stage"] == "ResponseComplete" for e in evs), evs[:1]
assert all(e["verb"] in ("create", "update", "patch", "delete", "deletecollection") for e in evs)
d = [e for e in evs if e["verb"] == "delete" and e["objectRef"].get("name") == "leaf"]
assert d and d[0]["user"]["username"] == "admin" and d[0]["responseStatus"]["code"] == 200, d
assert d[0]["objectRef"] == {"resource": "podgroups", "namespace": "default", "name": "leaf",
                             "apiGroup": "scheduling.k8s.io", "apiVersion": "v1alpha3"}, d[0]
assert d[0]["sourceIPs"] == ["127.0.0.1"], d[0]
assert "system:masters" in d[0]["user"]["groups"], d[0]
PY
grep -q 'podkernel_store_writes_total' "$WORK/body" || fail "store metrics"

# Token file changes are picked up without a restart.
sleep 1.1
echo 'newtok,late,4,"system:masters"' >>"$WORK/tokens"
expect 200 GET /api/v1/pods -H "Authorization: Bearer newtok"

# podkerneld's store admits Jobs by the workload builder's rules: a gang of
# minCount 0 is refused naming the field (the store alone only validates).
JOB='{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"jb"},"spec":{"parallelism":2,"scheduling":{"schedulingPolicy":{"gang":{"minCount":0}}},"template":{"spec":{"containers":[{"name":"c","image":"x"}]}}}}'
expect 422 POST /apis/batch/v1/namespaces/default/jobs -H "$A" -H "$J" -d "$JOB"
grep -q 'gang.minCount: Invalid value: 0: must be greater than or equal to 1' "$WORK/body" ||
	fail "Job not admitted by the builder: $(head -c 400 "$WORK/body")"

# After a restart the ring is empty: an old resourceVersion is 410 Gone.
pk_stop
# An audit log already at its size limit: the first write rotates it.
head -c 1048576 /dev/zero | tr '\0' x >"$WORK/audit.log"
pk_start "$WORK/data" --token-auth-file "$WORK/tokens" -v 2 --audit-log-path "$WORK/audit.log" \
	--audit-log-maxsize 1 --audit-log-maxbackup 1
PK_URL="http://127.0.0.1:$PK_PORT"
expect 410 GET "/api/v1/pods?watch=true&resourceVersion=$rv1" -H "$A"
grep -q '"code":410' "$WORK/body" || fail "410 without a Status"
expect 200 GET /api/v1/namespaces/default/pods/p1 -H "$A"
pk_stop

# Plain HTTP on a non-loopback address is refused.
"$PODKERNEL_BIN/podkerneld" --listen 0.0.0.0:0 --data-dir "$WORK/data2" 2>"$WORK/refused"
[ $? = 2 ] || fail "plain HTTP on 0.0.0.0 not refused as bad usage"
grep -q 'refusing plain HTTP' "$WORK/refused" || fail "no refusal message"
"$PODKERNEL_BIN/podkerneld" --listen nowhere --data-dir "$WORK/data2" 2>"$WORK/refused"
[ $? = 2 ] || fail "bad --listen not bad usage"
"$PODKERNEL_BIN/podkerneld" --bogus 2>/dev/null
[ $? = 2 ] || fail "unknown flag not bad usage"
printf 'tok,user\n' >"$WORK/badtokens"
"$PODKERNEL_BIN/podkerneld" --listen 127.0.0.1:0 --data-dir "$WORK/data2" \
	--token-auth-file "$WORK/badtokens" 2>"$WORK/refused"
[ $? = 2 ] || fail "bad token file not bad usage"
grep -q "badtokens:1:" "$WORK/refused" || fail "token file error without position: $(cat "$WORK/refused")"
echo "test_server_http: ok"
