#!/bin/sh
# Kueue's topology-aware scheduling on standalone podkerneld, through the
# real kubectl: a Topology of the gpu-cluster board's levels (block, rack,
# host), a ResourceFlavor naming it, and queued workloads whose pod
# templates carry kueue.x-k8s.io/podset-required-topology.  A Job that asks
# for one host is pinned to one; a JobSet that asks for one rack runs all its
# pods in one rack (the first with room for all of them), pinned by its pod
# templates' nodeSelector; a Job no block can hold waits with the reason.
# The placement map (/ui/api/placement, podctl map) lists the waiting Job
# with its position and what it waits for.  A Topology whose hostname level
# is not the last is refused by path.

. "$PODKERNEL_SRC/tests/kernel/server/lib.sh"
need kubectl
need python3
need curl
pk_start "$WORK/data" --write-kubeconfig "$WORK/kubeconfig" \
	--simulate-board "$PODKERNEL_SRC/boards/gpu-cluster.yaml"
pk_kubeconfig "$WORK/kubeconfig"
k() { timeout 20 kubectl --request-timeout=10s "$@"; }
# wait_for WHAT CMD...: until CMD succeeds (20 s)
wait_for() {
	what=$1; shift
	i=0
	until "$@" >/dev/null 2>&1; do
		[ $i -lt 200 ] || fail "$what"
		sleep 0.1
		i=$((i + 1))
	done
}
cat >"$WORK/q.yaml" <<'Y'
apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata: {name: gpu}
spec:
  levels:
  - nodeLabel: topology.podkernel.dev/block
  - nodeLabel: topology.podkernel.dev/rack
  - nodeLabel: kubernetes.io/hostname
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: tas-flavor}
spec: {topologyName: gpu}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: tas-flavor
      resources: [{name: nvidia.com/gpu, nominalQuota: 512}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: default}
spec: {clusterQueue: cq}
Y
k apply --validate=strict -f "$WORK/q.yaml" >"$WORK/out" 2>&1 || fail "apply: $(cat "$WORK/out")"

# job NAME PODS LEVEL: a queued Job of PODS pods of 8 GPUs, all in one domain of LEVEL
job() {
	cat <<Y
apiVersion: batch/v1
kind: Job
metadata: {name: $1, labels: {kueue.x-k8s.io/queue-name: lq}}
spec:
  parallelism: $2
  completions: $2
  suspend: true
  template:
    metadata:
      annotations: {kueue.x-k8s.io/podset-required-topology: $3}
    spec:
      containers: [{name: c, image: x, resources: {requests: {nvidia.com/gpu: "8"}}}]
Y
}
job one 1 kubernetes.io/hostname | k apply -f - >"$WORK/out" 2>&1 || fail "one: $(cat "$WORK/out")"
wait_for "one not admitted" sh -c \
	'[ "$(kubectl get job one -o jsonpath={.spec.suspend})" = false ]'
host=$(k get job one -o jsonpath='{.spec.template.spec.nodeSelector.kubernetes\.io/hostname}')
[ "$host" = gpu-b0-r0-n0 ] || fail "one pinned to '$host'"

cat >"$WORK/js.yaml" <<'Y'
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: train, labels: {kueue.x-k8s.io/queue-name: lq}}
spec:
  suspend: true
  replicatedJobs:
  - name: trainer
    replicas: 2
    template:
      spec:
        parallelism: 4
        completions: 4
        template:
          metadata:
            annotations: {kueue.x-k8s.io/podset-required-topology: topology.podkernel.dev/rack}
          spec:
            containers: [{name: c, image: x, resources: {requests: {nvidia.com/gpu: "8"}}}]
Y
k apply -f "$WORK/js.yaml" >"$WORK/out" 2>&1 || fail "train: $(cat "$WORK/out")"
bound() { k get pods -l jobset.sigs.k8s.io/jobset-name=train -o jsonpath='{.items[*].spec.nodeName}'; }
wait_for "train's 8 pods not bound" sh -c "[ \$(kubectl get pods -l \
jobset.sigs.k8s.io/jobset-name=train -o jsonpath='{.items[*].spec.nodeName}' | wc -w) = 8 ]"
# rack b0-r0 has 7 hosts free: the 8 pods go to b0-r1, all of them
racks=$(for n in $(bound); do echo "$n" | sed 's/-n[0-9]*$//'; done | sort -u | tr '\n' ' ')
[ "$racks" = "gpu-b0-r1 " ] || fail "train spread over racks: $racks ($(bound))"
sel=$(k get jobset train -o jsonpath='{.spec.replicatedJobs[0].template.spec.template.spec.nodeSelector}')
echo "$sel" | grep -q '"topology.podkernel.dev/rack":"b0-r1"' || fail "train's selector: $sel"

# 40 hosts in one block: no block has them
job big 40 topology.podkernel.dev/block | k apply -f - >"$WORK/out" 2>&1 || fail "big: $(cat "$WORK/out")"
wait_for "big has no pending reason" sh -c 'kubectl get job big -o yaml | grep -q pending-reason'
reason=$(k get job big -o jsonpath='{.metadata.annotations.queue\.podkernel\.dev/pending-reason}')
case $reason in
"pod set big: no domain of topology level topology.podkernel.dev/block places it ("*) ;;
*) fail "big's reason: $reason" ;;
esac
[ "$(k get job big -o jsonpath='{.spec.suspend}')" = true ] || fail "big admitted"

# the placement map lists it, with its position and what it waits for
url=$(sed -n 's/ *server: //p' "$WORK/kubeconfig")
curl -fsS "$url/ui/api/placement" >"$WORK/map.json" || fail "no placement map"
python3 - "$WORK/map.json" <<'PY' || fail "map: $(head -c 600 "$WORK/map.json")"
import json, sys
d = json.load(open(sys.argv[1]))
q = [w for w in d["queued"] if w["name"] == "big"]
assert len(q) == 1 and q[0]["kind"] == "Job" and q[0]["localQueue"] == "lq", q
assert q[0]["position"] == 1 and q[0]["wait"] == "placement", q
assert d["summary"]["queuedWorkloads"] == 1, d["summary"]
PY
PODKERNEL_SERVER=$url "$PODKERNEL_BIN/podctl" map --color never >"$WORK/map.txt" 2>&1 || fail "podctl map: $(cat "$WORK/map.txt")"
grep -q '^  #1 Job default/big in lq, waits on placement: pod set big: no domain' "$WORK/map.txt" ||
	fail "podctl map: $(sed -n '/Queued/,$p' "$WORK/map.txt")"

sed 's/name: gpu}/name: bad}/; s|- nodeLabel: topology.podkernel.dev/block|- nodeLabel: kubernetes.io/hostname|' \
	"$WORK/q.yaml" | sed -n '1,8p' | k apply -f - >"$WORK/out" 2>&1 && fail "bad topology accepted"
grep -q 'spec.levels\[0\].nodeLabel: Invalid value: "kubernetes.io/hostname": the kubernetes.io/hostname label can only be used at the lowest level of topology' \
	"$WORK/out" || fail "bad topology: $(cat "$WORK/out")"
k get topologies >"$WORK/out" 2>&1 && grep -q '^gpu ' "$WORK/out" || fail "get topologies: $(cat "$WORK/out")"
pk_stop
echo "test_queue_topology: ok"
