#!/bin/sh
# Standalone podkerneld allocates device claims with the bindings: a pod
# whose ResourceClaim does not exist stays pending with a message naming
# it; once the claim exists the pod is bound, and in the same write the
# claim's status.allocation names a device of the pod's node and its
# status.reservedFor the pod (with its uid).  Deleting the pod deallocates
# the claim nobody reserves any more.  A pod claim from a
# ResourceClaimTemplate gets its claim made by podkerneld's claim controller
# (generated name, owner reference to the pod, the pod's
# status.resourceClaimStatuses), is allocated and bound the same way, and the
# claim is deleted with the pod.  A PodGroup's claim from a template
# (KEP-6089) gets one claim for the group (owner reference to the PodGroup,
# the group's status.resourceClaimStatuses), allocated once and reserved for
# both pods of its gang, and deleted with the group.
. "$PODKERNEL_SRC/tests/kernel/server/lib.sh"
need kubectl

pk_start "$WORK/data"
pk_kubeconfig_open "$WORK/kubeconfig"
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

cat >"$WORK/tmpl.yaml" <<'Y'
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu}
spec:
  metadata: {labels: {team: a}}
  spec:
    devices:
      requests:
      - {name: gpu, exactly: {deviceClassName: gpu.example.com}}
---
apiVersion: v1
kind: Pod
metadata: {name: p2}
spec:
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}, claims: [{name: gpu}]}}]
Y
k apply -f "$WORK/tmpl.yaml" >"$WORK/out" 2>&1 || fail "apply template pod: $(cat "$WORK/out")"
wait_for "the template pod's binding" jp pod p2 '{.spec.nodeName}'
gen=$(jp pod p2 '{.status.resourceClaimStatuses[0].resourceClaimName}')
case "$gen" in p2-gpu-?*) ;; *) fail "generated claim name: '$gen'" ;; esac
[ "$(jp resourceclaim "$gen" '{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}/{.metadata.ownerReferences[0].uid}')" = "Pod/p2/$(jp pod p2 '{.metadata.uid}')" ] ||
	fail "owner of $gen: $(k get resourceclaim "$gen" -o json)"
[ "$(jp resourceclaim "$gen" '{.metadata.labels.team}')" = a ] || fail "template labels not copied"
[ "$(jp resourceclaim "$gen" '{.status.allocation.devices.results[0].device}')" = gpu-0 ] ||
	fail "generated claim not allocated: $(k get resourceclaim "$gen" -o json)"
[ "$(jp resourceclaim "$gen" '{.status.reservedFor[0].name}')" = p2 ] || fail "not reserved for p2"
k delete pod p2 --wait=false >/dev/null || fail "delete p2"
i=0
while k get resourceclaim "$gen" >/dev/null 2>&1; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "generated claim $gen outlived its pod"
	sleep 0.1
done
cat >"$WORK/group.yaml" <<'Y'
apiVersion: scheduling.k8s.io/v1alpha3
kind: PodGroup
metadata: {name: g}
spec:
  schedulingPolicy: {gang: {minCount: 2}}
  resourceClaims: [{name: shared, resourceClaimTemplateName: one-gpu}]
---
apiVersion: v1
kind: Pod
metadata: {name: g-0}
spec:
  schedulingGroup: {podGroupName: g}
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: g-1}
spec:
  schedulingGroup: {podGroupName: g}
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
Y
k apply -f "$WORK/group.yaml" >"$WORK/out" 2>&1 || fail "apply group: $(cat "$WORK/out")"
wait_for "the group's bindings" jp pod g-1 '{.spec.nodeName}'
[ -n "$(jp pod g-0 '{.spec.nodeName}')" ] || fail "g-0 not bound with g-1"
ggen=$(jp podgroup g '{.status.resourceClaimStatuses[0].name}/{.status.resourceClaimStatuses[0].resourceClaimName}')
case "$ggen" in shared/g-shared-?*) ggen=${ggen#shared/} ;; *) fail "group claim status: '$ggen'" ;; esac
[ "$(jp resourceclaim "$ggen" '{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}/{.metadata.ownerReferences[0].uid}')" = "PodGroup/g/$(jp podgroup g '{.metadata.uid}')" ] ||
	fail "owner of $ggen: $(k get resourceclaim "$ggen" -o json)"
[ "$(jp resourceclaim "$ggen" '{.status.allocation.devices.results[0].device}')" = gpu-0 ] ||
	fail "group claim not allocated: $(k get resourceclaim "$ggen" -o json)"
[ "$(jp resourceclaim "$ggen" '{.status.reservedFor[*].name}' | tr ' ' '\n' | sort | tr '\n' ' ')" = "g-0 g-1 " ] ||
	fail "group claim reservedFor: $(k get resourceclaim "$ggen" -o json)"
[ "$(k get resourceclaim -o name | grep -c 'g-shared-')" = 1 ] || fail "more than one group claim"
k delete pod g-0 g-1 --wait=false >/dev/null || fail "delete group pods"
k delete podgroup g --wait=false >/dev/null || fail "delete group"
i=0
while k get resourceclaim "$ggen" >/dev/null 2>&1; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "group claim $ggen outlived its PodGroup"
	sleep 0.1
done
pk_stop
