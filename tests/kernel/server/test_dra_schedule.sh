#!/bin/sh
# Standalone podkerneld allocates device claims with the bindings: a pod
# whose ResourceClaim does not exist stays pending with a message naming
# it; once the claim exists the pod is bound, and in the same write the
# claim's status.allocation names a device of the pod's node and its
# status.reservedFor the pod (with its uid).  Deleting the pod deallocates
# the claim nobody reserves any more.
. "$PODKERNEL_SRC/tests/kernel/server/lib.sh"
need kubectl

pk_start "$WORK/data"
cat >"$WORK/kubeconfig" <<K
apiVersion: v1
kind: Config
clusters: [{name: pk, cluster: {server: "http://127.0.0.1:$PK_PORT"}}]
users: [{name: u, user: {}}]
contexts: [{name: pk, context: {cluster: pk, user: u, namespace: default}}]
current-context: pk
K
export KUBECONFIG="$WORK/kubeconfig"
k() { kubectl --request-timeout=20s "$@"; }
# wait_for WHAT CMD...: until CMD prints something non-empty (10 s)
wait_for() {
	what=$1; shift
	i=0
	while [ $i -lt 100 ]; do
		out=$("$@" 2>/dev/null)
		[ -n "$out" ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	fail "timed out waiting for $what"
}
jp() { k get "$1" "$2" -o jsonpath="$3"; }

k apply -f "$PODKERNEL_SRC/examples/dra/deviceclasses.yaml" >/dev/null || fail "apply classes"
cat >"$WORK/objs.yaml" <<'Y'
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "8", memory: 8Gi, pods: "110"}, capacity: {cpu: "8", memory: 8Gi, pods: "110"}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpu.example.com}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 0, resourceSliceCount: 1}
  devices:
  - {name: gpu-0, attributes: {index: {int: 0}, type: {string: gpu}}}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  resourceClaims: [{name: gpu, resourceClaimName: c1}]
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}, claims: [{name: gpu}]}}]
Y
k apply -f "$WORK/objs.yaml" >"$WORK/out" 2>&1 || fail "apply: $(cat "$WORK/out")"
wait_for "the missing claim's message" sh -c \
	"kubectl get pod p -o jsonpath='{.status.conditions[0].message}' | grep 'ResourceClaim default/c1 not found'"
[ -z "$(jp pod p '{.spec.nodeName}')" ] || fail "pod bound without its claim"

cat >"$WORK/claim.yaml" <<'Y'
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c1}
spec:
  devices:
    requests:
    - {name: gpu, exactly: {deviceClassName: gpu.example.com}}
Y
k apply -f "$WORK/claim.yaml" >/dev/null || fail "apply claim"
wait_for "the binding" jp pod p '{.spec.nodeName}'
[ "$(jp pod p '{.spec.nodeName}')" = n1 ] || fail "bound to $(jp pod p '{.spec.nodeName}')"
[ "$(jp resourceclaim c1 '{.status.allocation.devices.results[0].device}')" = gpu-0 ] ||
	fail "claim not allocated: $(k get resourceclaim c1 -o json)"
[ "$(jp resourceclaim c1 '{.status.allocation.devices.results[0].pool}')" = n1 ] ||
	fail "wrong pool"
[ "$(jp resourceclaim c1 '{.status.reservedFor[0].name}')" = p ] || fail "not reserved for p"
[ "$(jp resourceclaim c1 '{.status.reservedFor[0].uid}')" = "$(jp pod p '{.metadata.uid}')" ] ||
	fail "reservedFor uid is not the pod's"

k delete pod p --wait=false >/dev/null || fail "delete pod"
i=0
while [ -n "$(jp resourceclaim c1 '{.status.allocation}')" ]; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "claim still allocated after its pod went: $(k get resourceclaim c1 -o json)"
	sleep 0.1
done
pk_stop
