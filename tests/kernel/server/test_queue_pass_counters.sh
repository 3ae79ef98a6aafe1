#!/bin/sh
# The queue controller keeps what its pass reads between passes: /metrics
# counts its passes, its full listings (one, at the start), the workloads it
# decoded, tried and placed, and those it did not try again because they
# were parked waiting for quota and nothing that could change that
# happened.  A Job that waits for quota is decoded once however many passes
# run after it; one that finishes frees the quota and the waiting one is
# admitted.

. "$PODKERNEL_SRC/tests/kernel/server/lib.sh"
need kubectl
need curl
pk_start "$WORK/data" --write-kubeconfig "$WORK/kubeconfig" \
	--simulate-board "$PODKERNEL_SRC/boards/gpu-cluster.yaml"
pk_kubeconfig "$WORK/kubeconfig"
k() { timeout 20 kubectl --request-timeout=10s "$@"; }
cat >"$WORK/q.yaml" <<'Y'
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default-flavor
      resources: [{name: cpu, nominalQuota: 4}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: default}
spec: {clusterQueue: cq}
Y
job() {
	cat <<Y
apiVersion: batch/v1
kind: Job
metadata: {name: $1, labels: {kueue.x-k8s.io/queue-name: lq}}
spec:
  suspend: true
  template:
    spec:
      containers: [{name: c, image: x, resources: {requests: {cpu: "4"}}}]
Y
}
# counter NAME: podkernel_queue_NAME_total now
counter() {
	curl -s "http://127.0.0.1:$PK_PORT/metrics" |
		sed -n "s/^podkernel_queue_$1_total \([0-9]*\)$/\1/p"
}
k apply -f "$WORK/q.yaml" >/dev/null || fail "queue objects"
job first | k apply -f - >/dev/null || fail "job first"
i=0
until [ "$(k get job first -o jsonpath='{.spec.suspend}')" = false ]; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "first was not admitted"; sleep 0.1
done
job second | k apply -f - >/dev/null || fail "job second"
i=0
until k get job second -o jsonpath='{.metadata.annotations}' | grep -q 'insufficient unused quota'; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "second has no pending reason"; sleep 0.1
done
decoded=$(counter workloads_decoded)
[ -n "$decoded" ] || fail "no podkernel_queue_workloads_decoded_total"
# more passes (a new queue object each), nothing freed: second is not decoded or tried again
for n in 1 2 3; do
	k create namespace "other-$n" >/dev/null || fail "namespace other-$n"
done
sleep 1
[ "$(counter listings)" = 1 ] || fail "listings: $(counter listings)"
[ "$(counter workloads_decoded)" = "$decoded" ] ||
	fail "decoded $(counter workloads_decoded) after $decoded"
[ "$(counter passes)" -gt 3 ] || fail "passes: $(counter passes)"
# first finishes: its quota frees and second is admitted
k delete job first >/dev/null || fail "delete first"
i=0
until [ "$(k get job second -o jsonpath='{.spec.suspend}')" = false ]; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "second was not admitted"; sleep 0.1
done
[ "$(counter placement_checks)" -ge 2 ] || fail "placement checks: $(counter placement_checks)"
pk_stop
