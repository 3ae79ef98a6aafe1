#!/bin/sh
# `podctl schedule` runs the queue controller's pass offline, as standalone
# podkerneld does (tests/kernel/controllers/test_queues.c runs the same
# scenarios there): a WorkloadPriorityClass orders the queue (Kueue's
# kueue.x-k8s.io/priority-class label) and leaves the pods' priority alone;
# one that does not exist keeps its workload out; plain pods and a pod group
# labelled kueue.x-k8s.io/queue-name are held by the gate
# kueue.x-k8s.io/admission until admitted, a group as one unit; Kueue's plain
# pod group (kueue.x-k8s.io/pod-group-name, pod-group-total-count) waits for
# all its pods and runs as a gang, and its inconsistent counts are refused by
# path; a stopped
# ClusterQueue (stopPolicy Hold) admits nothing.
set -u
BIN=${PODKERNEL_BIN:-build/bin}
PODCTL="$BIN/podctl"
[ -x "$PODCTL" ] || { echo "test_queues_offline: $PODCTL not built" >&2; exit 1; }
T=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
fail=0
check() { # check NAME CONDITION-RESULT
	if [ "$2" = 0 ]; then echo "ok   $1"; else echo "FAIL $1" >&2; fail=1; fi
}
run() { # run ARGS... ; stdout in $T/out, stderr in $T/err, rc in $rc
	"$PODCTL" "$@" >"$T/out" 2>"$T/err"
	rc=$?
}
flat() { tr -d ' \n\t' <"$1"; }
cat >"$T/node.yaml" <<'EOF'
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "16", pods: "110"}}
EOF
# queues STOPPOLICY: a ClusterQueue of 4 CPUs and its LocalQueue q
queues() {
	cat <<EOF
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  stopPolicy: $1
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: default-flavor, resources: [{name: cpu, nominalQuota: 4}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q, namespace: default}
spec: {clusterQueue: cq}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: high}
value: 100
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: low}
value: 1
EOF
}
# qjob NAME WPC CPUS: a queued Job of one pod, of WorkloadPriorityClass WPC
qjob() {
	cat <<EOF
---
apiVersion: batch/v1
kind: Job
metadata: {name: $1, namespace: default, labels: {kueue.x-k8s.io/queue-name: q, kueue.x-k8s.io/priority-class: $2}}
spec:
  suspend: true
  template:
    spec:
      containers: [{name: c, image: x, resources: {requests: {cpu: "$3"}}}]
EOF
}
# Kueue's WorkloadPriorityClass example: the later Job of class high is
# admitted first; the earlier one of class low waits, first in line
{ queues None; qjob early low 4; qjob late high 4; qjob ghost nope 1; } >"$T/wpc.yaml"
run schedule -f "$T/node.yaml" -f "$T/wpc.yaml" -o json
check "WorkloadPriorityClass: schedules (rc=$rc)" $rc
grep -qx 'admitted: Job default/late by cq/default-flavor' "$T/err"
check "the higher WorkloadPriorityClass is admitted first" $?
grep -qx 'pending: Job default/early (position 1): insufficient unused quota for cpu in flavor default-flavor of ClusterQueue cq, 4 more needed' "$T/err"
check "the lower one waits" $?
grep -qx 'pending: Job default/ghost (position 2): WorkloadPriorityClass nope does not exist' "$T/err"
check "a WorkloadPriorityClass that does not exist keeps its Job out" $?
flat "$T/out" | grep -q '"name":"late-0"' && ! flat "$T/out" | grep -q '"priority":100'
check "the pods keep their own priority" $?

# qpod NAME CPUS [GROUP]: a queued plain pod (in PodGroup GROUP)
qpod() {
	group=
	[ $# -lt 3 ] || group="schedulingGroup: {podGroupName: $3}"
	cat <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: default, labels: {kueue.x-k8s.io/queue-name: q}}
spec:
  $group
  containers: [{name: c, image: x, resources: {requests: {cpu: "$2"}}}]
EOF
}
{ queues None; qpod p1 2; qpod p2 2; qpod p3 2; } >"$T/pods.yaml"
run schedule -f "$T/node.yaml" -f "$T/pods.yaml" -o json
check "plain pods: schedule (rc=$rc)" $rc
grep -qx 'admitted: Pod default/p1 by cq/default-flavor' "$T/err" &&
	grep -qx 'admitted: Pod default/p2 by cq/default-flavor' "$T/err"
check "two pods fit the quota: admitted" $?
grep -qx 'pending: Pod default/p3 (position 1): insufficient unused quota for cpu in flavor default-flavor of ClusterQueue cq, 2 more needed' "$T/err"
check "the third waits" $?
[ "$(flat "$T/out" | grep -o '"nodeName":"n1"' | wc -l)" = 2 ]
check "the admitted pods are bound, the pending one is not" $?
flat "$T/out" | grep -q '"schedulingGates":\[{"name":"kueue.x-k8s.io/admission"}\]'
check "the pending pod keeps the gate kueue.x-k8s.io/admission" $?

# a pod group is one unit: a gang of 2 pods of 2 CPUs fits 4, a second does not
{ queues None; cat <<'EOF'; qpod a-0 2 a; qpod a-1 2 a; qpod b-0 2 b; qpod b-1 2 b; } >"$T/groups.yaml"
---
apiVersion: scheduling.k8s.io/v1alpha3
kind: PodGroup
metadata: {name: a, namespace: default}
spec: {schedulingPolicy: {gang: {minCount: 2}}}
---
apiVersion: scheduling.k8s.io/v1alpha3
kind: PodGroup
metadata: {name: b, namespace: default}
spec: {schedulingPolicy: {gang: {minCount: 2}}}
EOF
run schedule -f "$T/node.yaml" -f "$T/groups.yaml" -o json
check "pod groups: schedule (rc=$rc)" $rc
grep -qx 'admitted: Pod default/a-0 by cq/default-flavor' "$T/err" &&
	grep -qx 'admitted: Pod default/a-1 by cq/default-flavor' "$T/err"
check "the first group is admitted whole" $?
grep -qx 'pending: Pod default/b-0 (position 1): insufficient unused quota for cpu in flavor default-flavor of ClusterQueue cq, 4 more needed' "$T/err" &&
	grep -qx 'pending: Pod default/b-1 (position 1): insufficient unused quota for cpu in flavor default-flavor of ClusterQueue cq, 4 more needed' "$T/err"
check "the second waits whole" $?

# Kueue's plain pod group (its sample kueue-pod-group.yaml): the pods labelled
# kueue.x-k8s.io/pod-group-name and annotated pod-group-total-count are one
# workload, admitted when all of them exist, placed as a gang of that count
# kgpod NAME GROUP COUNT CPUS: a pod of Kueue's pod group GROUP of COUNT pods
kgpod() {
	cat <<EOF
---
apiVersion: v1
kind: Pod
metadata:
  name: $1
  namespace: default
  labels: {kueue.x-k8s.io/queue-name: q, kueue.x-k8s.io/pod-group-name: $2}
  annotations: {kueue.x-k8s.io/pod-group-total-count: "$3"}
spec:
  containers: [{name: sleep, image: busybox, resources: {requests: {cpu: "$4"}}}]
EOF
}
{ queues None; kgpod sample-pod-a sample-group 2 2; kgpod sample-pod-b sample-group 2 2; } >"$T/kgroup.yaml"
run schedule -f "$T/node.yaml" -f "$T/kgroup.yaml" -o json
check "Kueue pod group: schedules (rc=$rc)" $rc
grep -qx 'admitted: Pod default/sample-pod-a by cq/default-flavor' "$T/err" &&
	grep -qx 'admitted: Pod default/sample-pod-b by cq/default-flavor' "$T/err" &&
	[ "$(flat "$T/out" | grep -o '"nodeName":"n1"' | wc -l)" = 2 ]
check "the group's pods are admitted together and bound" $?
flat "$T/out" | grep -q '"kind":"PodGroup","metadata":{"name":"sample-group"' &&
	flat "$T/out" | grep -q '"gang":{"minCount":2}' &&
	flat "$T/out" | grep -q '"schedulingGroup":{"podGroupName":"sample-group"}'
check "the group is the PodGroup of its name, a gang of its total count" $?
{ queues None; kgpod w-0 waits 3 1; kgpod w-1 waits 3 1; } >"$T/kwait.yaml"
run schedule -f "$T/node.yaml" -f "$T/kwait.yaml" -o json
grep -qx 'pending: Pod default/w-0 (position 1): pod group waits: 2 of its 3 pods exist (kueue.x-k8s.io/pod-group-total-count); waiting for the rest' "$T/err" &&
	! grep -q '^admitted' "$T/err"
check "a group waits for all of its pods" $?
{ queues None; kgpod x-0 mixed 2 1; kgpod x-1 mixed 3 1; } >"$T/kmixed.yaml"
run schedule -f "$T/node.yaml" -f "$T/kmixed.yaml" -o json
grep -q 'pending: Pod default/x-0 (position 1): metadata.annotations\[kueue.x-k8s.io/pod-group-total-count\]: Invalid value: "3": pod x-1 of pod group mixed disagrees with pod x-0 ("2")' "$T/err"
check "pods that disagree on the total count are refused by path" $?
{ queues None; kgpod y-0 bad 0 1; } >"$T/kbad.yaml"
run schedule -f "$T/node.yaml" -f "$T/kbad.yaml" -o json
[ "$rc" != 0 ] && grep -q 'metadata.annotations\[kueue.x-k8s.io/pod-group-total-count\]: Invalid value: "0": group total count should be an integer greater than zero' "$T/err"
check "a total count under 1 is refused by path" $?
{ queues None; kgpod z-0 lone 2 1 | sed '/annotations:/d'; } >"$T/knocount.yaml"
run schedule -f "$T/node.yaml" -f "$T/knocount.yaml" -o json
[ "$rc" != 0 ] && grep -q "metadata.annotations\[kueue.x-k8s.io/pod-group-total-count\]: Required value: both the 'kueue.x-k8s.io/pod-group-total-count' annotation and the 'kueue.x-k8s.io/pod-group-name' label should be set" "$T/err"
check "a group name without its total count is refused by path" $?

# a ClusterQueue stopped with Hold admits nothing
{ queues Hold; qjob held high 1; } >"$T/hold.yaml"
run schedule -f "$T/node.yaml" -f "$T/hold.yaml" -o json
check "Hold: schedules (rc=$rc)" $rc
grep -qx 'pending: Job default/held (position 1): ClusterQueue cq is stopped' "$T/err"
check "a stopped ClusterQueue admits nothing" $?
exit $fail
