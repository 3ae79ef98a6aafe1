#!/bin/sh
# End to end: podkerneld with TLS and token auth, four podagents on real hwloc
# exports (each with its own node token), racks labelled with kubectl,
# workloads submitted with podctl and with kubectl; every gang, topology and
# capacity invariant holds (check_placement.py).  Then a node's agent dies:
# after the grace period the node is tainted unreachable and the whole
# disruptionMode-all gang on it is evicted; the agent comes back and the node
# is Ready again.  Finally a Node deleted through the API loses its pods.
set -eu
. "$PODKERNEL_SRC/tests/e2e/lib.sh"
need_python
need_fixtures
need_tool kubectl curl

e2e_setup
e2e_tls
export PODKERNEL_NODE_GRACE_SECONDS=3
# node identities must be in the token file before the server reads it
for n in gpu-a gpu-b gpu-c cpu-d; do e2e_node_token "$n" > /dev/null; done
e2e_start_server -v 2
e2e_kubeconfig
e2e_agent gpu-a power8gpudistances.xml
e2e_agent gpu-b 24em64t-2n6c2t-pci.xml
e2e_agent gpu-c power8gpudistances.xml
e2e_agent cpu-d 192em64t-24n8c2t.xml
for n in gpu-a gpu-b gpu-c cpu-d; do
	wait_for 20 podctl get node "$n" || fail "node $n was not published"
done
podctl get nodes -o wide

kc label node gpu-a gpu-b topology.podkernel.dev/rack=r1 > /dev/null || fail "kubectl label"
kc label node gpu-c cpu-d topology.podkernel.dev/rack=r2 > /dev/null || fail "kubectl label"

# A node token may write only its own Node.
if podctl --token e2e-node-gpu-a delete node gpu-b > /dev/null 2>&1; then
	fail "node gpu-a could delete node gpu-b"
fi

# podctl: a gang of two 3-GPU pods in one rack, atomic disruption.  Only r1
# (4 + 3 GPUs) can hold it; r2 has one 4-GPU node.
cat > "$WORK/train.yaml" <<'EOF'
apiVersion: scheduling.k8s.io/v1alpha3
kind: PodGroup
metadata: {name: train}
spec:
  workloadRef: {workloadName: train, templateName: train}
  schedulingPolicy: {gang: {minCount: 2}}
  schedulingConstraints: {topology: [{key: topology.podkernel.dev/rack}]}
  disruptionMode: {all: {}}
EOF
for i in 0 1; do cat >> "$WORK/train.yaml" <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: train-$i}
spec:
  schedulingGroup: {podGroupName: train}
  containers: [{name: c, image: x, resources: {requests: {nvidia.com/gpu: "3", cpu: "2"}}}]
EOF
done
podctl apply -f "$WORK/train.yaml" || fail "podctl apply"

# kubectl: three web pods pinned to rack r2, and a gang that cannot fit.
cat > "$WORK/kubectl.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: web-0}
spec:
  nodeSelector: {topology.podkernel.dev/rack: r2}
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: web-1}
spec:
  nodeSelector: {topology.podkernel.dev/rack: r2}
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
---
apiVersion: scheduling.k8s.io/v1alpha3
kind: PodGroup
metadata: {name: big}
spec:
  workloadRef: {workloadName: big, templateName: big}
  schedulingPolicy: {gang: {minCount: 3}}
---
apiVersion: v1
kind: Pod
metadata: {name: big-0}
spec:
  schedulingGroup: {podGroupName: big}
  containers: [{name: c, image: x, resources: {requests: {nvidia.com/gpu: "4"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: big-1}
spec:
  schedulingGroup: {podGroupName: big}
  containers: [{name: c, image: x, resources: {requests: {nvidia.com/gpu: "4"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: big-2}
spec:
  schedulingGroup: {podGroupName: big}
  containers: [{name: c, image: x, resources: {requests: {nvidia.com/gpu: "4"}}}]
EOF
kc apply -f "$WORK/kubectl.yaml" > /dev/null || fail "kubectl apply"

wait_for 20 has_bound 4 default || fail "train and web pods were not bound"
wait_for 10 sh -c "'$BIN/podctl' describe pg big | grep -q Unschedulable" ||
	fail "gang big has no Unschedulable condition"
podctl get pods -o wide
check_placement
for p in train-0 train-1; do
	podctl get pod "$p" | grep -q ' gpu-[ab] ' || fail "$p not in rack r1"
done
podctl get pod big-0 | grep -q Pending || fail "big-0 should stay pending"

echo "--- gpu-b's agent stops reporting"
kill -9 "$AGENT_PID_gpu_b"
wait_for 20 sh -c "'$BIN/podctl' get node gpu-b | grep -q Unreachable" ||
	fail "gpu-b was not marked unreachable"
wait_for 10 sh -c "! '$BIN/podctl' get pod train-0 && ! '$BIN/podctl' get pod train-1" ||
	fail "the disruptionMode all gang was not evicted as a whole"
podctl describe node gpu-b | grep -q 'node.kubernetes.io/unreachable:NoExecute' ||
	fail "gpu-b lacks the unreachable taint"
podctl get node gpu-b -o json | grep -q '"NodeStatusUnknown"' || fail "gpu-b Ready is not False"
check_placement

echo "--- gpu-b's agent comes back"
e2e_agent gpu-b 24em64t-2n6c2t-pci.xml
wait_for 20 sh -c "'$BIN/podctl' get node gpu-b | grep -q ' Ready '" || fail "gpu-b did not recover"

echo "--- node gpu-c is deleted through the API"
kill -9 "$AGENT_PID_gpu_c"
on_c=$(podctl get pods | awk '$3 == "gpu-c" { print $1 }')
kc delete node gpu-c > /dev/null || fail "kubectl delete node"
for p in $on_c; do
	wait_for 10 sh -c "! '$BIN/podctl' get pod $p" || fail "pod $p of the deleted node stayed"
done
check_placement
grep -q "evicted pod default/" "$WORK/podkerneld.log" || fail "no eviction logged"
echo "ok"
