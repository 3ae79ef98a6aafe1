#!/bin/sh
# kubectl's typed calls send Kubernetes protobuf (application/vnd.kubernetes.protobuf):
# `kubectl drain --force` of a busy node (Evictions), `kubectl create job`,
# `kubectl debug node/...` and `kubectl debug --copy-to`, and a protobuf
# DeleteOptions whose precondition the server must honour.  Field validation
# (`--validate=strict|warn|ignore`) on an unknown `spec.containerz`.
# `kubectl apply --server-side` with conflicts and --force-conflicts.
# `kubectl explain` over the OpenAPI v3 documents.  Run
# against the standalone appliance and against the `--no-scheduling`
# stand-in that attach mode talks to.
. "$PODKERNEL_SRC/tests/kernel/server/lib.sh"
need kubectl
need curl
need openssl
kminor=$(kubectl version --client -o json 2>/dev/null | tr -d ' \n' |
	sed -n 's/.*"clientVersion":{[^}]*"minor":"\([0-9]*\).*/\1/p')
[ -n "$kminor" ] || { echo "FAIL: cannot read kubectl's version" >&2; exit 1; }
[ "$kminor" -ge 31 ] || skip "kubectl 1.$kminor is older than 1.31 (the tests need 1.31+)"
SEEDS="$PODKERNEL_SRC/tests/fuzz/corpus/fuzz_proto"

# kubectl sends a bearer token only over TLS.
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$WORK/key.pem" -out "$WORK/cert.pem" \
	-days 1 -subj /CN=localhost -addext "subjectAltName=IP:127.0.0.1" >/dev/null 2>&1 ||
	fail "openssl cannot make a certificate"
cat >"$WORK/tokens" <<'T'
admintok,admin,1,"system:masters"
T
k() { timeout 60 kubectl --request-timeout=20s "$@"; }

# The calls below run in both modes, like the rest.
more_checks() {
	# debug: a node debugging pod (hostPID, the host's root as a hostPath
	# volume, pinned to the node) and a copy of a pod with a debug container.
	k debug node/n1 --image=busybox >"$WORK/out" 2>&1 || fail "$mode: debug node: $(cat "$WORK/out")"
	dbg=$(k get pods -o name | grep node-debugger-n1 | head -1)
	[ -n "$dbg" ] || fail "$mode: no node-debugger pod"
	got=$(k get "$dbg" -o jsonpath='{.spec.nodeName} {.spec.hostPID} {.spec.volumes[0].hostPath.path} {.spec.containers[0].volumeMounts[0].mountPath}')
	[ "$got" = "n1 true / /host" ] || fail "$mode: debug pod as stored: $got"
	k debug bare1 --copy-to=bare1-debug --image=busybox --container=dbg >"$WORK/out" 2>&1 ||
		fail "$mode: debug --copy-to: $(cat "$WORK/out")"
	got=$(k get pod bare1-debug -o jsonpath='{.spec.containers[*].name}')
	[ "$got" = "c dbg" ] || fail "$mode: debug copy: $got"

	# Server-side apply, continued: --force-conflicts, a field dropped by one
	# owner and kept by another, a conflict with kubectl create's manager.
	k apply --server-side --field-manager=other --force-conflicts -f "$WORK/ssa2.yaml" >"$WORK/out" 2>&1 ||
		fail "$mode: --force-conflicts: $(cat "$WORK/out")"
	[ "$(k get pod ssa -o jsonpath='{.spec.containers[0].image}')" = two ] || fail "$mode: force did not apply"
	sed 's/, tier: web//' "$WORK/ssa.yaml" | k apply --server-side --field-manager=other -f - >/dev/null 2>&1 ||
		fail "$mode: apply without tier"
	got=$(k get pod ssa -o jsonpath='{.metadata.labels.tier}/{.metadata.labels.app}')
	[ "$got" = "web/one" ] || fail "$mode: tier is still kubectl's and stays: $got"
	k get pod ssa -o json --show-managed-fields >"$WORK/out"
	grep -q '"manager": "other"' "$WORK/out" && grep -q '"operation": "Apply"' "$WORK/out" ||
		fail "$mode: managedFields: $(cat "$WORK/out")"
	sed 's/name: ssa,/name: created,/' "$WORK/ssa.yaml" | k create -f - >/dev/null 2>&1 || fail "$mode: create"
	sed 's/name: ssa,/name: created,/' "$WORK/ssa2.yaml" | k apply --server-side -f - >"$WORK/out" 2>&1 &&
		fail "$mode: apply over kubectl create's image went through"
	grep -q 'conflict with "kubectl-create"' "$WORK/out" || fail "$mode: create conflict: $(cat "$WORK/out")"
	# A later non-apply write takes over what it changes: kubectl patch's image.
	k patch pod ssa --type=merge -p '{"spec":{"containers":[{"name":"c","image":"edited"}]}}' \
		>/dev/null 2>&1 || fail "$mode: patch"
	k apply --server-side --field-manager=other -f "$WORK/ssa2.yaml" >"$WORK/out" 2>&1 &&
		fail "$mode: apply over kubectl patch's image went through"
	grep -q 'conflict with "kubectl-patch" using v1: .spec.containers\[name="c"\].image' "$WORK/out" ||
		fail "$mode: patch conflict: $(cat "$WORK/out")"

	# OpenAPI v3 from the same field tables: kubectl explain.
	k explain pods >"$WORK/out" 2>&1 && grep -q '^KIND: *Pod' "$WORK/out" &&
		grep -q 'spec.*<PodSpec>' "$WORK/out" || fail "$mode: explain pods: $(cat "$WORK/out")"
	k explain pods.spec.containers.image >"$WORK/out" 2>&1 && grep -q 'image.*<string>' "$WORK/out" ||
		fail "$mode: explain image: $(cat "$WORK/out")"
	k explain podgroups.spec.schedulingPolicy.gang >"$WORK/out" 2>&1 &&
		grep -q 'minCount.*<integer>' "$WORK/out" || fail "$mode: explain pg: $(cat "$WORK/out")"
	k explain pods.spec.containerz >"$WORK/out" 2>&1 && fail "$mode: explain knows spec.containerz"

}

run_mode() {
	mode=$1; shift
	pk_start "$WORK/data-$mode" --token-auth-file "$WORK/tokens" \
		--tls-cert-file "$WORK/cert.pem" --tls-private-key-file "$WORK/key.pem" "$@"
	PK_URL="https://127.0.0.1:$PK_PORT"
	cat >"$WORK/kubeconfig" <<K
apiVersion: v1
kind: Config
clusters: [{name: pk, cluster: {server: "$PK_URL", certificate-authority: "$WORK/cert.pem"}}]
users: [{name: u, user: {token: admintok}}]
contexts: [{name: pk, context: {cluster: pk, user: u, namespace: default}}]
current-context: pk
K
	export KUBECONFIG="$WORK/kubeconfig"
	cat >"$WORK/busy.yaml" <<'Y'
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {cpu: "8", memory: 8Gi, pods: "110"}
  capacity: {cpu: "8", memory: 8Gi, pods: "110"}
  conditions: [{type: Ready, status: "True"}]
---
apiVersion: v1
kind: Pod
metadata: {name: bare1}
spec:
  nodeName: n1
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: bare2}
spec:
  nodeName: n1
  containers: [{name: c, image: busybox}]
Y
	k create -f "$WORK/busy.yaml" >"$WORK/out" 2>&1 || fail "$mode: create: $(cat "$WORK/out")"

	# create job: a protobuf Job whose command and image arrive intact.
	k create job hello --image=busybox -- echo hi >"$WORK/out" 2>&1 ||
		fail "$mode: create job: $(cat "$WORK/out")"
	got=$(k get job hello -o jsonpath='{.spec.template.spec.containers[0].image} {.spec.template.spec.containers[0].command}')
	[ "$got" = 'busybox ["echo","hi"]' ] || fail "$mode: job as stored: $got"

	# A protobuf DeleteOptions is read: its uid precondition refuses (409).
	got=$(curl -s --cacert "$WORK/cert.pem" -o "$WORK/body" -w '%{http_code}' -X DELETE -H 'Authorization: Bearer admintok' \
		-H 'Content-Type: application/vnd.kubernetes.protobuf' \
		--data-binary @"$SEEDS/deleteoptions" "$PK_URL/api/v1/namespaces/default/pods/bare2")
	[ "$got" = 409 ] && grep -q 'UID in precondition: u' "$WORK/body" ||
		fail "$mode: protobuf DeleteOptions: $got $(cat "$WORK/body")"
	k get pod bare2 >/dev/null 2>&1 || fail "$mode: a refused delete deleted bare2"

	# fieldValidation: kubectl --validate=strict (its default) asks for Strict,
	# an unknown field is 400 and nothing is created; Warn creates the pod
	# with a Warning kubectl prints; Ignore says nothing.
	cat >"$WORK/typo.yaml" <<'Y'
apiVersion: v1
kind: Pod
metadata: {name: typo}
spec:
  containerz: [{name: c, image: busybox}]
  containers: [{name: c, image: busybox, imagez: x}]
Y
	k apply --validate=strict -f "$WORK/typo.yaml" >"$WORK/out" 2>&1 &&
		fail "$mode: --validate=strict accepted spec.containerz"
	grep -q 'BadRequest.*strict decoding error: .*unknown field "spec.containerz"' "$WORK/out" &&
		grep -q 'unknown field "spec.containers\[0\].imagez"' "$WORK/out" ||
		fail "$mode: strict: $(cat "$WORK/out")"
	k get pod typo >/dev/null 2>&1 && fail "$mode: a Strict refusal created the pod"
	k apply --validate=warn -f "$WORK/typo.yaml" >"$WORK/out" 2>&1 || fail "$mode: warn: $(cat "$WORK/out")"
	grep -q '^Warning: unknown field "spec.containerz"' "$WORK/out" ||
		fail "$mode: no warning: $(cat "$WORK/out")"
	k delete pod typo >/dev/null 2>&1
	k create --validate=ignore -f "$WORK/typo.yaml" >"$WORK/out" 2>&1 || fail "$mode: ignore: $(cat "$WORK/out")"
	grep -q Warning "$WORK/out" && fail "$mode: Ignore warned: $(cat "$WORK/out")"
	k delete pod typo >/dev/null 2>&1

	# Server-side apply: create, a second manager's conflict (409 naming the
	# manager and field), --force-conflicts, a field dropped by its only owner,
	# and a conflict with what `kubectl create` (manager kubectl-create) wrote.
	cat >"$WORK/ssa.yaml" <<'Y'
apiVersion: v1
kind: Pod
metadata: {name: ssa, labels: {app: one, tier: web}}
spec:
  containers: [{name: c, image: one}]
Y
	k apply --server-side -f "$WORK/ssa.yaml" >"$WORK/out" 2>&1 &&
		grep -q 'pod/ssa serverside-applied' "$WORK/out" || fail "$mode: ssa create: $(cat "$WORK/out")"
	sed 's/image: one/image: two/' "$WORK/ssa.yaml" >"$WORK/ssa2.yaml"
	k apply --server-side --field-manager=other -f "$WORK/ssa2.yaml" >"$WORK/out" 2>&1 &&
		fail "$mode: a conflicting apply went through"
	grep -q 'Apply failed with 1 conflict: conflict with "kubectl" using v1: .spec.containers\[name="c"\].image' \
		"$WORK/out" || fail "$mode: conflict: $(cat "$WORK/out")"
	[ "$(k get pod ssa -o jsonpath='{.spec.containers[0].image}')" = one ] || fail "$mode: conflict wrote"
	more_checks

	# drain --force: the bare pods (no controller) are evicted through
	# pods/eviction, the node is cordoned, and drain returns once they are gone.
	k drain n1 --force --ignore-daemonsets --timeout=40s >"$WORK/out" 2>&1 ||
		fail "$mode: drain: $(cat "$WORK/out")"
	grep -q 'pod/bare1 evicted' "$WORK/out" && grep -q 'node/n1 drained' "$WORK/out" ||
		fail "$mode: drain output: $(cat "$WORK/out")"
	[ "$(k get node n1 -o jsonpath='{.spec.unschedulable}')" = true ] || fail "$mode: n1 not cordoned"
	k get pod bare1 >/dev/null 2>&1 && fail "$mode: bare1 survived the drain"
	k get pods -o wide --field-selector spec.nodeName=n1 >"$WORK/out" 2>&1
	grep -q 'bare\|debugger' "$WORK/out" && fail "$mode: pods left on n1: $(cat "$WORK/out")"
	pk_stop
}

run_mode standalone
run_mode stand-in --no-scheduling
echo "test_kubectl_wire: ok"
