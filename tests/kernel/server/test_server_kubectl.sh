#!/bin/sh
# podkerneld driven by the real kubectl over TLS (a self-signed certificate
# made here with openssl) with bearer tokens from a kubeconfig: create -f,
# get in every output format, -w, label, annotate, apply, describe, delete,
# explain and strict validation of a JobSet (a custom resource's schema), a
# node identity refused on another node, a new pod's phase and QoS class,
# ownerReferences checks, and impersonation (--as, auth can-i --as).
. "$PODKERNEL_SRC/tests/kernel/server/lib.sh"
need kubectl
need openssl
need curl
. "$PODKERNEL_SRC/tests/need.sh"
# kubectl's supported skew is one minor version around the server's (v1.32):
# an older client (Debian's kubernetes-client is 1.20) is no test of today's.
kminor=$(kubectl version --client -o json 2>/dev/null | tr -d ' \n' |
	sed -n 's/.*"clientVersion":{[^}]*"minor":"\([0-9]*\).*/\1/p')
[ -n "$kminor" ] || { echo "FAIL: cannot read kubectl's version" >&2; exit 1; }
[ "$kminor" -ge 31 ] || skip "kubectl 1.$kminor is older than 1.31 (the tests need 1.31+)"

openssl req -x509 -newkey rsa:2048 -nodes -keyout "$WORK/key.pem" -out "$WORK/cert.pem" \
	-days 1 -subj /CN=localhost -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" \
	>/dev/null 2>&1 || { echo "FAIL: openssl cannot make a certificate" >&2; exit 1; }
cat >"$WORK/tokens" <<'T'
admintok,admin,1,"system:masters"
node1tok,system:node:n1,2,"system:nodes"
viewtok,viewer,3
T
pk_start "$WORK/data" --token-auth-file "$WORK/tokens" \
	--tls-cert-file "$WORK/cert.pem" --tls-private-key-file "$WORK/key.pem"
# TLS 1.2 or newer: a client that offers only 1.0 or 1.1 gets no session
# (the client's own floor is lowered so that the server is what refuses).
for v in tls1 tls1_1; do
	out=$(openssl s_client -connect "127.0.0.1:$PK_PORT" -"$v" -cipher 'DEFAULT:@SECLEVEL=0' \
		</dev/null 2>&1)
	case $out in *"New, TLSv1"*) fail "a $v client got a session: $(echo "$out" | grep New,)" ;; esac
done
openssl s_client -connect "127.0.0.1:$PK_PORT" -tls1_2 </dev/null 2>&1 | grep -q "New, TLSv1.2" ||
	fail "a TLS 1.2 client got no session"
# ... with forward secrecy only: a client offering only static-RSA suites gets none.
for c in AES128-SHA AES256-GCM-SHA384 DHE-RSA-AES128-GCM-SHA256; do
	out=$(openssl s_client -connect "127.0.0.1:$PK_PORT" -tls1_2 -cipher "$c:@SECLEVEL=0" \
		</dev/null 2>&1)
	case $out in *"New, TLSv1"*) fail "a $c-only TLS 1.2 client got a session" ;; esac
done
kubeconfig() {
	cat <<K
apiVersion: v1
kind: Config
clusters: [{name: pk, cluster: {server: "https://127.0.0.1:$PK_PORT", certificate-authority: "$WORK/cert.pem"}}]
users: [{name: u, user: {token: $1}}]
contexts: [{name: pk, context: {cluster: pk, user: u, namespace: default}}]
current-context: pk
K
}
kubeconfig admintok >"$WORK/admin.kubeconfig"
kubeconfig node1tok >"$WORK/node.kubeconfig"
kubeconfig wrongtok >"$WORK/wrong.kubeconfig"
kubeconfig viewtok >"$WORK/viewer.kubeconfig"
export KUBECONFIG="$WORK/admin.kubeconfig"
k() { timeout 20 kubectl --request-timeout=10s "$@"; }

# TLS is really on: plain HTTP to the port does not get an API answer.
curl -s --max-time 3 "http://127.0.0.1:$PK_PORT/healthz" 2>/dev/null | grep -q '^ok$' &&
	fail "plain HTTP answered on the TLS port"
curl -s --max-time 3 --cacert "$WORK/cert.pem" "https://127.0.0.1:$PK_PORT/healthz" | grep -q ok ||
	fail "no TLS healthz"

cat >"$WORK/objs.yaml" <<'Y'
apiVersion: v1
kind: Node
metadata:
  name: n2
  labels: {topology.podkernel.dev/cube: c0}
status:
  allocatable: {cpu: "8", google.com/tpu: "4"}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: scheduling.k8s.io/v1alpha3
kind: Workload
metadata: {name: w}
spec:
  podGroupTemplates:
  - name: pg1
    schedulingPolicy: {gang: {minCount: 1}}
---
apiVersion: scheduling.k8s.io/v1alpha3
kind: PodGroup
metadata: {name: pg1}
spec:
  workloadRef: {workloadName: w, templateName: pg1}
  schedulingPolicy: {gang: {minCount: 1}}
---
apiVersion: v1
kind: Pod
metadata: {name: p1, labels: {app: a}}
spec:
  priorityClassName: high
  schedulingGroup: {podGroupName: pg1}
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
Y
k create -f "$WORK/objs.yaml" >"$WORK/out" 2>&1 || fail "create -f: $(cat "$WORK/out")"
grep -q 'pod/p1 created' "$WORK/out" || fail "create output: $(cat "$WORK/out")"

k get ns >"$WORK/out" 2>&1 && grep -q '^default' "$WORK/out" || fail "get ns: $(cat "$WORK/out")"
k get pods >"$WORK/out" 2>&1 && grep -q '^p1 .*\(Pending\|Scheduled\)' "$WORK/out" || fail "get pods: $(cat "$WORK/out")"
k get pods -o wide >"$WORK/out" 2>&1 && grep -q 'GROUP' "$WORK/out" && grep -q 'pg1' "$WORK/out" ||
	fail "get -o wide: $(cat "$WORK/out")"
k get pod p1 -o yaml >"$WORK/out" 2>&1 && grep -q 'priority: 1000' "$WORK/out" ||
	fail "get -o yaml (priority from the class): $(cat "$WORK/out")"
k get pod p1 -o json >"$WORK/out" 2>&1 && grep -q '"resourceVersion"' "$WORK/out" || fail "-o json"
k get pods,pg,no -o name >"$WORK/out" 2>&1 || fail "-o name: $(cat "$WORK/out")"
grep -q '^pod/p1$' "$WORK/out" && grep -q '^podgroup.scheduling.k8s.io/pg1$' "$WORK/out" &&
	grep -q '^node/n2$' "$WORK/out" || fail "-o name: $(cat "$WORK/out")"
k get pg >"$WORK/out" 2>&1 && grep -q '^pg1 .*gang' "$WORK/out" || fail "get pg: $(cat "$WORK/out")"
k get wl,pc -A >"$WORK/out" 2>&1 || fail "get wl,pc: $(cat "$WORK/out")"
k get pods -A >"$WORK/out" 2>&1 && grep -q '^default .*p1' "$WORK/out" || fail "get -A: $(cat "$WORK/out")"

k label pod p1 tier=web >/dev/null 2>&1 || fail "label"
k annotate pod p1 note=hello >/dev/null 2>&1 || fail "annotate"
k get pods -l tier=web --show-labels >"$WORK/out" 2>&1 && grep -q 'tier=web' "$WORK/out" ||
	fail "label selector: $(cat "$WORK/out")"
k label pod p1 tier- >/dev/null 2>&1 || fail "label removal"
k get pods -l tier=web >"$WORK/out" 2>&1
grep -q p1 "$WORK/out" && fail "label not removed"
k describe pod p1 >"$WORK/out" 2>&1 && grep -q 'note: *hello' "$WORK/out" ||
	fail "describe: $(cat "$WORK/out")"
# A new pod is Pending with its QoS class, as kube-apiserver creates it.
grep -q '^Status: *Pending' "$WORK/out" && grep -q '^QoS Class: *Burstable' "$WORK/out" ||
	fail "describe: no phase or QoS class: $(cat "$WORK/out")"
k get pods --field-selector status.phase=Pending -o name >"$WORK/out" 2>&1 &&
	grep -q '^pod/p1$' "$WORK/out" || fail "--field-selector status.phase=Pending: $(cat "$WORK/out")"
k get pods --field-selector status.phase=Running -o name >"$WORK/out" 2>&1 || fail "phase=Running"
[ -s "$WORK/out" ] && fail "--field-selector status.phase=Running: $(cat "$WORK/out")"
[ "$(k get pods -o jsonpath='{.items[?(@.status.phase=="Pending")].metadata.name}')" = p1 ] ||
	fail "jsonpath on status.phase"

# ownerReferences as kube-apiserver checks them (422), merged by uid by a strategic merge patch.
cat >"$WORK/po.yaml" <<'Y'
apiVersion: v1
kind: Pod
metadata:
  name: po
  ownerReferences: [{apiVersion: v1, kind: Node, name: n2}]
spec: {containers: [{name: c, image: x}]}
Y
k create -f "$WORK/po.yaml" >"$WORK/out" 2>&1 && fail "an ownerReference without uid was accepted"
grep -q 'is invalid: metadata.ownerReferences\[0\].uid: Invalid value: "": must not be empty' \
	"$WORK/out" || fail "ownerReference without uid: $(cat "$WORK/out")"
n2uid=$(k get node n2 -o jsonpath='{.metadata.uid}')
pcuid=$(k get pc high -o jsonpath='{.metadata.uid}')
sed "s/name: n2}/name: n2, uid: $n2uid}/" "$WORK/po.yaml" | k create -f - >/dev/null 2>&1 || fail "create po"
k patch pod po -p "{\"metadata\":{\"ownerReferences\":[{\"apiVersion\":\"scheduling.k8s.io/v1\",
	\"kind\":\"PriorityClass\",\"name\":\"high\",\"uid\":\"$pcuid\"}]}}" >"$WORK/out" 2>&1 ||
	fail "patch ownerReferences: $(cat "$WORK/out")"
[ "$(k get pod po -o jsonpath='{.metadata.ownerReferences[*].name}')" = "n2 high" ] ||
	fail "strategic merge replaced the ownerReferences: $(k get pod po -o yaml)"
k patch pod po --type=merge -p "{\"metadata\":{\"ownerReferences\":[
	{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"n2\",\"uid\":\"$n2uid\",\"controller\":true},
	{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"n2\",\"uid\":\"x\",\"controller\":true}]}}" \
	>"$WORK/out" 2>&1 && fail "two controller references accepted"
grep -q 'Only one reference can have Controller set to true' "$WORK/out" ||
	fail "two controllers: $(cat "$WORK/out")"
k delete pod po --wait=false >/dev/null 2>&1 || fail "delete po"

# apply: create a new object, then change it.
sed 's/name: pg1}/name: pg2}/; s/templateName: pg1/templateName: pg1/' "$WORK/objs.yaml" |
	awk 'BEGIN{RS="---\n"; ORS="---\n"} /kind: PodGroup/' >"$WORK/pg2.yaml"
k apply -f "$WORK/pg2.yaml" >"$WORK/out" 2>&1 || fail "apply create: $(cat "$WORK/out")"
sed 's/minCount: 1/minCount: 3/' "$WORK/pg2.yaml" >"$WORK/pg2b.yaml"
k apply -f "$WORK/pg2b.yaml" >"$WORK/out" 2>&1 || fail "apply update: $(cat "$WORK/out")"
k get pg pg2 -o jsonpath='{.spec.schedulingPolicy.gang.minCount}' >"$WORK/out" 2>&1
[ "$(cat "$WORK/out")" = 3 ] || fail "apply did not change pg2: $(cat "$WORK/out")"

# apply on a Pod (strategic merge patch): the container keeps its requests.
cat >"$WORK/pa.yaml" <<'Y'
apiVersion: v1
kind: Pod
metadata: {name: pa}
spec:
  containers: [{name: c, image: one, resources: {requests: {cpu: "1"}}}]
Y
k apply -f "$WORK/pa.yaml" >"$WORK/out" 2>&1 || fail "apply pod: $(cat "$WORK/out")"
sed 's/image: one/image: two/' "$WORK/pa.yaml" >"$WORK/pa2.yaml"
k apply -f "$WORK/pa2.yaml" >"$WORK/out" 2>&1 || fail "apply pod again: $(cat "$WORK/out")"
k get pod pa -o jsonpath='{.spec.containers[0].image} {.spec.containers[0].resources.requests.cpu}' \
	>"$WORK/out" 2>&1
[ "$(cat "$WORK/out")" = "two 1" ] || fail "apply on a pod: $(cat "$WORK/out")"
k describe pg pg1 >"$WORK/out" 2>&1 && grep -q 'Min Count: *1' "$WORK/out" ||
	fail "describe pg: $(cat "$WORK/out")"

# get -w sees a new pod, then the stream is cut by the timeout.
k get pods -w --request-timeout=4s >"$WORK/watch" 2>&1 &
wpid=$!
sleep 1.5
sed 's/name: p1, labels/name: p2, labels/' "$WORK/objs.yaml" | awk 'BEGIN{RS="---\n"} /kind: Pod\n/' |
	k create -f - >/dev/null 2>&1 || fail "create p2"
wait $wpid
grep -q '^p2 ' "$WORK/watch" || fail "get -w did not show p2: $(cat "$WORK/watch")"

# Server-side dry runs write nothing (they used to delete for real).
k delete pod p1 --dry-run=server >"$WORK/out" 2>&1 && grep -q 'deleted (server dry run)' "$WORK/out" ||
	fail "delete --dry-run=server: $(cat "$WORK/out")"
k get pod p1 >/dev/null 2>&1 || fail "delete --dry-run=server deleted p1"
sed 's/name: pa}/name: pdry}/' "$WORK/pa.yaml" | k create --dry-run=server -f - >"$WORK/out" 2>&1 &&
	grep -q 'created (server dry run)' "$WORK/out" || fail "create --dry-run=server: $(cat "$WORK/out")"
k get pod pdry >/dev/null 2>&1 && fail "create --dry-run=server created pdry"
k version >"$WORK/out" 2>&1 && grep -q 'Server Version: v1.32' "$WORK/out" ||
	fail "kubectl version: $(cat "$WORK/out")"
k delete pod p1 >"$WORK/out" 2>&1 && grep -q 'deleted' "$WORK/out" || fail "delete: $(cat "$WORK/out")"
k get pod p1 >"$WORK/out" 2>&1 && fail "p1 still there"
grep -q 'NotFound\|not found' "$WORK/out" || fail "no NotFound: $(cat "$WORK/out")"

# JobSet, a custom resource upstream, has its schema as a CRD has: kubectl
# explain reads it, and --validate=strict refuses a typo with its path.
k explain jobsets.spec.replicatedJobs >"$WORK/out" 2>&1 && grep -q 'GROUP: *jobset.x-k8s.io' "$WORK/out" &&
	grep -q 'replicas.*<integer>' "$WORK/out" && grep -q 'template.*<JobTemplateSpec>' "$WORK/out" ||
	fail "explain jobsets.spec.replicatedJobs: $(cat "$WORK/out")"
cat >"$WORK/js.yaml" <<'Y'
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js-typo}
spec:
  replicatedJobs:
  - name: w
    replicass: 1
    template: {spec: {template: {spec: {containers: [{name: c, image: x, imagez: y}]}}}}
Y
k apply --validate=strict -f "$WORK/js.yaml" >"$WORK/out" 2>&1 && fail "strict accepted a JobSet typo"
grep -q 'BadRequest.*strict decoding error: unknown field "spec.replicatedJobs\[0\].replicass"' "$WORK/out" &&
	grep -q 'unknown field "spec.replicatedJobs\[0\].template.spec.template.spec.containers\[0\].imagez"' \
		"$WORK/out" || fail "JobSet strict: $(cat "$WORK/out")"
k get jobset js-typo >/dev/null 2>&1 && fail "a Strict refusal created the JobSet"

# A JSON kind: List (kubectl validates its items against /openapi/v2).
cat >"$WORK/list.json" <<'L'
{"apiVersion": "v1", "kind": "List", "items": [
 {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "l1"}, "value": 1},
 {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "l2"}, "value": 2}]}
L
k create -f "$WORK/list.json" >"$WORK/out" 2>&1 || fail "create a List: $(cat "$WORK/out")"
k create priorityclass l3 --value=3 >"$WORK/out" 2>&1 || fail "create priorityclass: $(cat "$WORK/out")"
k get pc -o name >"$WORK/out" 2>&1
grep -q 'l1$' "$WORK/out" && grep -q 'l3$' "$WORK/out" || fail "List items: $(cat "$WORK/out")"

# Namespaces: delete takes the contents along; default is protected.
k create namespace team >/dev/null 2>&1 || fail "create namespace"
sed 's/name: pa}/name: pa, namespace: team}/' "$WORK/pa.yaml" | k create -f - >/dev/null 2>&1 ||
	fail "create in team"
k delete namespace team >"$WORK/out" 2>&1 || fail "delete namespace: $(cat "$WORK/out")"
k get pods -n team -o name >"$WORK/out" 2>&1
[ -s "$WORK/out" ] && fail "pods left in a deleted namespace: $(cat "$WORK/out")"
k delete namespace default >"$WORK/out" 2>&1 && fail "deleted the default namespace"
grep -qi forbidden "$WORK/out" || fail "default namespace: $(cat "$WORK/out")"

# Identities: a wrong token is refused; a node may not touch another node.
KUBECONFIG="$WORK/wrong.kubeconfig" k get pods >"$WORK/out" 2>&1 && fail "wrong token accepted"
grep -qi 'unauthorized\|credentials' "$WORK/out" || fail "wrong token: $(cat "$WORK/out")"
KUBECONFIG="$WORK/node.kubeconfig" k label node n2 x=y >"$WORK/out" 2>&1 && fail "node patched another node"
grep -qi 'forbidden' "$WORK/out" || fail "no Forbidden: $(cat "$WORK/out")"
KUBECONFIG="$WORK/node.kubeconfig" k get nodes >/dev/null 2>&1 || fail "node cannot read nodes"

# Tables as kube-apiserver prints them: Nodes with ROLES and VERSION, Jobs,
# ResourceClaims, ResourceSlices, JobSets and Events.
cat >"$WORK/tables.yaml" <<'Y'
apiVersion: v1
kind: Node
metadata:
  name: n3
  labels: {node-role.kubernetes.io/worker: "", node-role.kubernetes.io/gpu: ""}
status:
  allocatable: {cpu: "1"}
  nodeInfo: {kubeletVersion: v1.32.4}
  conditions: [{type: Ready, status: "False", reason: Down}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: j1}
spec:
  suspend: true
  completions: 3
  parallelism: 3
  template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: rc1}
spec: {devices: {requests: [{name: r, exactly: {deviceClassName: tpu}}]}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: rs1}
spec: {driver: tpu.example.com, nodeName: n2, pool: {name: pool-a, generation: 1, resourceSliceCount: 1}, devices: [{name: d0}]}
---
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js1}
spec:
  replicatedJobs:
  - name: w
    replicas: 1
    template: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}
Y
k create -f "$WORK/tables.yaml" >"$WORK/out" 2>&1 || fail "create the table objects: $(cat "$WORK/out")"
k get pods >"$WORK/out" 2>&1 && head -1 "$WORK/out" | grep -q '^NAME *READY *STATUS *RESTARTS *AGE$' &&
	grep -q '^pa *0/1 *[A-Za-z]* *0 ' "$WORK/out" || fail "get pods columns: $(cat "$WORK/out")"
k get nodes >"$WORK/out" 2>&1 || fail "get nodes: $(cat "$WORK/out")"
head -1 "$WORK/out" | grep -q '^NAME *STATUS *ROLES *AGE *VERSION$' || fail "get nodes header: $(cat "$WORK/out")"
grep -q '^n3 *NotReady *gpu,worker *[0-9][0-9a-z]* *v1.32.4$' "$WORK/out" || fail "get nodes n3: $(cat "$WORK/out")"
k get jobs >"$WORK/out" 2>&1 || fail "get jobs: $(cat "$WORK/out")"
head -1 "$WORK/out" | grep -q '^NAME *STATUS *COMPLETIONS *DURATION *AGE$' || fail "get jobs header: $(cat "$WORK/out")"
grep -q '^j1 *[A-Za-z]* *0/3 ' "$WORK/out" || fail "get jobs j1: $(cat "$WORK/out")"
k get resourceclaims >"$WORK/out" 2>&1 && grep -q '^NAME *STATE *AGE$' "$WORK/out" &&
	grep -q '^rc1 *pending ' "$WORK/out" || fail "get resourceclaims: $(cat "$WORK/out")"
k get resourceslices >"$WORK/out" 2>&1 && grep -q '^NAME *NODE *DRIVER *POOL *AGE$' "$WORK/out" &&
	grep -q '^rs1 *n2 *tpu.example.com *pool-a ' "$WORK/out" || fail "get resourceslices: $(cat "$WORK/out")"
k get jobsets >"$WORK/out" 2>&1 &&
	grep -q '^NAME *TERMINALSTATE *RESTARTS *COMPLETED *SUSPENDED *AGE$' "$WORK/out" &&
	grep -q '^js1 ' "$WORK/out" || fail "get jobsets: $(cat "$WORK/out")"
# An events.k8s.io Event (how attach mode writes) is a core Event too: its
# reason and note are what get events, kubectl events and describe show.
uid=$(k get pod pa -o jsonpath='{.metadata.uid}')
k create -f - >"$WORK/out" 2>&1 <<Y || fail "create an events.k8s.io Event: $(cat "$WORK/out")"
apiVersion: events.k8s.io/v1
kind: Event
metadata: {name: p1.attach}
eventTime: "2026-01-01T00:00:00.000000Z"
reportingController: podkernel.dev/scheduler
reportingInstance: attach-1
action: Binding
reason: AttachReason
type: Normal
note: bound by the attach-mode scheduler
regarding: {kind: Pod, apiVersion: v1, namespace: default, name: pa, uid: "$uid"}
Y
k get events >"$WORK/out" 2>&1 || fail "get events: $(cat "$WORK/out")"
head -1 "$WORK/out" | grep -q '^LAST SEEN *TYPE *REASON *OBJECT *MESSAGE$' || fail "get events header: $(cat "$WORK/out")"
grep -q ' Normal *AttachReason *pod/pa *bound by the attach-mode scheduler$' "$WORK/out" ||
	fail "get events: $(cat "$WORK/out")"
k events >"$WORK/out" 2>&1 && grep -q 'Normal *AttachReason *Pod/pa *bound by the attach-mode' "$WORK/out" ||
	fail "kubectl events: $(cat "$WORK/out")"
k describe pod pa >"$WORK/out" 2>&1 &&
	grep -q 'Normal *AttachReason .*podkernel.dev/scheduler *bound by the attach-mode' "$WORK/out" ||
	fail "describe pod pa (Events): $(cat "$WORK/out")"
k get events.v1.events.k8s.io p1.attach -o jsonpath='{.note}/{.regarding.name}/{.reportingController}' \
	>"$WORK/out" 2>&1
[ "$(cat "$WORK/out")" = "bound by the attach-mode scheduler/pa/podkernel.dev/scheduler" ] ||
	fail "events.k8s.io read back: $(cat "$WORK/out")"
k get events p1.attach -o jsonpath='{.message}/{.involvedObject.name}/{.reportingComponent}' >"$WORK/out" 2>&1
[ "$(cat "$WORK/out")" = "bound by the attach-mode scheduler/pa/podkernel.dev/scheduler" ] ||
	fail "core read of an events.k8s.io Event: $(cat "$WORK/out")"
k patch events.v1.events.k8s.io p1.attach --type=merge -p '{"note":"patched note"}' >/dev/null 2>&1 ||
	fail "patch an events.k8s.io Event"
k get events p1.attach -o jsonpath='{.message}' >"$WORK/out" 2>&1
[ "$(cat "$WORK/out")" = "patched note" ] || fail "events.k8s.io patch: $(cat "$WORK/out")"

# Impersonation: --as runs as that user (who may only read here), auth can-i
# answers for it, and only who may impersonate (system:masters) can.
k --as=viewer get pods >/dev/null 2>&1 || fail "--as=viewer cannot read"
k --as=viewer create priorityclass imp --value=1 >"$WORK/out" 2>&1 && fail "--as=viewer created"
grep -q 'User "viewer" cannot create resource "priorityclasses"' "$WORK/out" ||
	fail "--as=viewer create: $(cat "$WORK/out")"
[ "$(k auth can-i create pods)" = yes ] || fail "admin can-i create pods"
[ "$(k auth can-i create pods --as=viewer)" = no ] || fail "can-i --as=viewer create pods"
[ "$(k auth can-i get pods --as=viewer)" = yes ] || fail "can-i --as=viewer get pods"
[ "$(k auth can-i create pods --as=viewer --as-group=system:masters)" = yes ] ||
	fail "can-i --as-group=system:masters"
[ "$(k auth can-i impersonate users)" = yes ] || fail "admin can-i impersonate users"
[ "$(KUBECONFIG="$WORK/viewer.kubeconfig" k auth can-i impersonate users)" = no ] ||
	fail "viewer can-i impersonate users"
k auth whoami --as=system:serviceaccount:team:robot -o jsonpath='{.status.userInfo.groups}' \
	>"$WORK/out" 2>&1 || fail "whoami --as a service account: $(cat "$WORK/out")"
grep -q '"system:serviceaccounts","system:serviceaccounts:team","system:authenticated"' \
	"$WORK/out" || fail "service account groups: $(cat "$WORK/out")"
KUBECONFIG="$WORK/viewer.kubeconfig" k --as=admin get pods >"$WORK/out" 2>&1 &&
	fail "viewer impersonated admin"
grep -q 'users "admin" is forbidden: User "viewer" cannot impersonate resource "users" in API group "" at the cluster scope' \
	"$WORK/out" || fail "viewer --as=admin: $(cat "$WORK/out")"
KUBECONFIG="$WORK/node.kubeconfig" k --as=system:node:n2 --as-group=system:nodes label node n2 x=y \
	>"$WORK/out" 2>&1 && fail "a node impersonated another node"
grep -q 'cannot impersonate' "$WORK/out" || fail "node --as: $(cat "$WORK/out")"

pk_stop
echo "test_server_kubectl: ok"
