#!/bin/sh
# Attach mode with podkernel's queues (--queues=podkernel): the stand-in
# cluster (podkerneld --no-scheduling, which runs no Job controller and no
# queue controller of its own) serves a ResourceFlavor, a ClusterQueue with
# quota for one Job and its LocalQueue; two queued, suspended Jobs are
# submitted.  The attached podkerneld admits the first in the cluster
# (spec.suspend false, the admission annotation, the flavor's node labels in
# its pod template) and leaves the second suspended with its queue order and
# pending reason; the ClusterQueue's and LocalQueue's status say so; a Job
# of a LocalQueue that does not exist gets an Inadmissible Event there.  The
# pod the cluster's Job controller would create for the admitted Job is
# bound by podkernel within the flavor's nodes; a queued plain pod (gated
# at creation) is ungated in the cluster and bound.  A user still cannot resume
# the pending Job (only the queue controller's identity may).  The first Job
# deleted, the second is admitted; a Job of a higher WorkloadPriorityClass
# then preempts it (suspended again in the cluster) and is admitted.
set -eu
. "$PODKERNEL_SRC/tests/e2e/lib.sh"
. "$PODKERNEL_SRC/tests/e2e/attach_lib.sh"
need_python
need_tool curl
trap 'attach_dump' USR1

e2e_setup
attach_cluster_start --queue-controller-user system:kube-scheduler
attach_register_board 1
attach_start q --queues=podkernel
HP=$ATTACH_PORT_q
wait_for 20 curl -sf "http://127.0.0.1:$HP/readyz" || { attach_dump; fail "never ready"; }

cat > "$WORK/queues.yaml" <<'EOF'
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: ss0}
spec:
  nodeLabels: {topology.podkernel.dev/superslice: ss0}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: ss0
      resources: [{name: cpu, nominalQuota: "4"}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: user-queue, namespace: default}
spec: {clusterQueue: team}
EOF
podctl apply -f "$WORK/queues.yaml" > /dev/null || fail "apply queues.yaml"
job() {
	cat > "$WORK/job-$1.yaml" <<EOF
apiVersion: batch/v1
kind: Job
metadata:
  name: $1
  labels: {kueue.x-k8s.io/queue-name: user-queue}
spec:
  suspend: true
  parallelism: 2
  template:
    spec:
      schedulerName: podkernel
      restartPolicy: Never
      containers: [{name: c, image: x, resources: {requests: {cpu: "2"}}}]
EOF
	podctl apply -f "$WORK/job-$1.yaml" > /dev/null || fail "apply job $1"
}
# one creation second apart at most: the queue order is then by name (job-a first)
job job-a
job job-b

# jobfield NAME FIELD: the Job's spec.suspend, an annotation, or its template's nodeSelector
jobfield() {
	podctl get job "$1" -o json 2> /dev/null | python3 -c '
import json, sys
j = json.load(sys.stdin)
a = j["metadata"].get("annotations", {})
f = sys.argv[1]
if f == "suspend":
    print(str(j["spec"].get("suspend", False)).lower())
elif f == "selector":
    print(json.dumps(j["spec"]["template"]["spec"].get("nodeSelector", {}), sort_keys=True))
else:
    print(a.get("queue.podkernel.dev/" + f, ""))' "$2"
}
admitted() { [ "$(jobfield "$1" suspend)" = false ] && [ -n "$(jobfield "$1" admission)" ]; }
pending_told() { [ -n "$(jobfield "$1" pending-reason)" ]; }
wait_for 30 admitted job-a || { attach_dump; fail "job-a was not admitted in the cluster"; }
wait_for 20 pending_told job-b || { attach_dump; fail "job-b was not told why it waits"; }
[ "$(jobfield job-a admission)" = "team/ss0" ] || fail "job-a admission: $(jobfield job-a admission)"
[ "$(jobfield job-a selector)" = '{"topology.podkernel.dev/superslice": "ss0"}' ] ||
	fail "job-a's template lacks the flavor's node labels: $(jobfield job-a selector)"
[ -z "$(jobfield job-a pending-reason)" ] || fail "the admitted job-a still has a pending reason"
[ "$(jobfield job-b suspend)" = true ] || fail "job-b was resumed without quota"
[ -z "$(jobfield job-b admission)" ] || fail "job-b was admitted without quota"
case "$(jobfield job-b queue-order)" in # its place in team's order, ranked by readers
"team 0 "*" Job/"*"/job-b") ;;
*) fail "job-b queue order: $(jobfield job-b queue-order)" ;;
esac
case "$(jobfield job-b pending-reason)" in
*"insufficient unused quota for cpu in flavor ss0 of ClusterQueue team"*) ;;
*) fail "job-b pending reason: $(jobfield job-b pending-reason)" ;;
esac

# status: the ClusterQueue's and LocalQueue's counts and usage, in the cluster
queue_status() {
	podctl get "$1" "$2" $3 -o json 2> /dev/null | python3 -c '
import json, sys
s = json.load(sys.stdin).get("status", {})
use = {r["name"]: r["total"] for f in s.get("flavorsUsage", []) for r in f.get("resources", [])}
print(s.get("admittedWorkloads", 0), s.get("pendingWorkloads", 0), use.get("cpu", "0"))'
}
cq_says() { [ "$(queue_status clusterqueue team "")" = "$1" ]; }
wait_for 20 cq_says "1 1 4" || { attach_dump; fail "ClusterQueue team status: $(queue_status clusterqueue team "")"; }
lq_says() { [ "$(queue_status localqueue user-queue "-n default")" = "$1" ]; }
wait_for 20 lq_says "1 1 4" ||
	{ attach_dump; fail "LocalQueue user-queue status: $(queue_status localqueue user-queue "-n default")"; }

# A Job queued in a LocalQueue that does not exist gets the pass's Warning
# Event in the cluster (events.k8s.io/v1), regarding the cluster's Job.
sed 's/name: job-b/name: job-lost/; s/queue-name: user-queue/queue-name: nosuch/' \
	"$WORK/job-job-b.yaml" > "$WORK/job-lost.yaml"
podctl apply -f "$WORK/job-lost.yaml" > /dev/null || fail "apply job-lost"
inadmissible_event() {
	uid=$(podctl get job job-lost -o jsonpath='{.metadata.uid}')
	curl -sf --cacert "$WORK/cert.pem" -H "Authorization: Bearer $ADMIN_TOKEN" \
		"$PODKERNEL_SERVER/apis/events.k8s.io/v1/namespaces/default/events" | python3 -c '
import json, sys
items = json.load(sys.stdin)["items"]
sys.exit(0 if any(e.get("reason") == "Inadmissible" and e.get("type") == "Warning" and
                  e.get("note") == "LocalQueue nosuch does not exist in namespace default" and
                  e.get("regarding", {}).get("uid") == sys.argv[1] for e in items) else 1)' "$uid"
}
wait_for 20 inadmissible_event || { attach_dump; fail "no Inadmissible Event for job-lost"; }
[ "$(jobfield job-lost suspend)" = true ] || fail "job-lost was resumed"

# The cluster's Job controller creates the admitted Job's pods (the stand-in
# has none: the test does, from the admitted template); podkernel binds them.
podctl get job job-a -o json > "$WORK/job-a.json" || fail "get job-a"
python3 - "$WORK/job-a.json" > "$WORK/job-a-pods.json" <<'PY' || fail "the admitted Job's pods"
import json, sys
j = json.load(open(sys.argv[1]))
t = j["spec"]["template"]
pods = [{"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": "job-a-%d" % i, "labels": {"job-name": "job-a"},
                      "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "job-a",
                                           "uid": j["metadata"]["uid"], "controller": True}]},
         "spec": t["spec"]} for i in range(2)]
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": pods}))
PY
podctl apply -f "$WORK/job-a-pods.json" > /dev/null || fail "creating job-a's pods"
pods_bound() { [ -n "$(bound_to job-a-0)" ] && [ -n "$(bound_to job-a-1)" ]; }
wait_for 20 pods_bound || { attach_dump; fail "job-a's pods were not bound"; }

# Only the queue controller resumes a queued Job: a user's resume is refused.
sed 's/suspend: true/suspend: false/' "$WORK/job-job-b.yaml" > "$WORK/resume.yaml"
if podctl apply -f "$WORK/resume.yaml" > "$WORK/resume.out" 2>&1; then
	fail "a user resumed a queued Job"
fi
grep -q "spec.suspend: Forbidden" "$WORK/resume.out" || fail "resume refused why: $(cat "$WORK/resume.out")"

# A queued plain pod (the cluster gates it at creation, as Kueue's webhook
# does) in a ClusterQueue of its own: ungated in the cluster with its
# admission annotation, then bound by podkernel.
cat > "$WORK/queued-pod.yaml" <<'EOF'
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: pods}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: ss0
      resources: [{name: cpu, nominalQuota: "1"}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: pod-queue, namespace: default}
spec: {clusterQueue: pods}
---
apiVersion: v1
kind: Pod
metadata:
  name: queued-pod
  labels: {kueue.x-k8s.io/queue-name: pod-queue}
spec:
  schedulerName: podkernel
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
EOF
podctl apply -f "$WORK/queued-pod.yaml" > /dev/null || fail "apply queued-pod.yaml"
pod_admitted() {
	podctl get pod queued-pod -o json 2> /dev/null | python3 -c '
import json, sys
p = json.load(sys.stdin)
gates = [g["name"] for g in p["spec"].get("schedulingGates", [])]
a = p["metadata"].get("annotations", {}).get("queue.podkernel.dev/admission", "")
sys.exit(0 if a == "pods/ss0" and not gates and p["spec"].get("nodeName") else 1)'
}
wait_for 30 pod_admitted || { attach_dump; fail "the queued pod was not admitted, ungated and bound"; }

# job-a goes: its quota is free and job-b is admitted.
podctl delete job job-a > /dev/null || fail "delete job-a"
podctl delete pod job-a-0 job-a-1 > /dev/null 2>&1 || true
wait_for 30 admitted job-b || { attach_dump; fail "job-b was not admitted once job-a went"; }
[ -z "$(jobfield job-b pending-reason)" ] || fail "the admitted job-b still has a pending reason"
[ -z "$(jobfield job-b queue-order)" ] || fail "the admitted job-b still has a queue order"
wait_for 20 cq_says "1 0 4" || { attach_dump; fail "ClusterQueue team status after: $(queue_status clusterqueue team "")"; }

# Preemption for quota: the ClusterQueue now preempts lower priority within
# it; a Job of a higher WorkloadPriorityClass takes job-b's quota: job-b is
# suspended again in the cluster (its admission taken back, in its own write
# before the admission) and the new Job is admitted.
cat > "$WORK/preempt.yaml" <<'EOF'
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team}
spec:
  namespaceSelector: {}
  preemption: {withinClusterQueue: LowerPriority}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: ss0
      resources: [{name: cpu, nominalQuota: "4"}]
EOF
podctl apply -f "$WORK/preempt.yaml" > /dev/null || fail "apply preempt.yaml"
sed 's/name: job-b/name: job-urgent/; s/queue-name: user-queue}/queue-name: user-queue, kueue.x-k8s.io\/priority-class: high}/' \
	"$WORK/job-job-b.yaml" > "$WORK/job-urgent.yaml"
podctl apply -f "$WORK/job-urgent.yaml" > /dev/null || fail "apply job-urgent"
wait_for 30 admitted job-urgent || { attach_dump; fail "job-urgent was not admitted by preemption"; }
[ "$(jobfield job-b suspend)" = true ] || fail "the preempted job-b was not suspended"
[ -z "$(jobfield job-b admission)" ] || fail "the preempted job-b kept its admission"
wait_for 20 cq_says "1 1 4" || { attach_dump; fail "ClusterQueue team status after preemption: $(queue_status clusterqueue team "")"; }
# the preempted job-b waits again, told why (a pass after the one that preempted it)
wait_for 20 pending_told job-b || { attach_dump; fail "the preempted job-b was not told why it waits"; }

curl -sf "http://127.0.0.1:$HP/metrics" > "$WORK/metrics" || fail "/metrics"
grep -q '^podkernel_attach_queue_passes_total{result="ok"} [1-9]' "$WORK/metrics" ||
	fail "no queue pass in the metrics"
grep -q '^podkernel_attach_queue_writes_total [1-9]' "$WORK/metrics" || fail "no queue write counted"
# Settled: the echoes of its own writes make passes that write nothing more.
writes() { curl -sf "http://127.0.0.1:$HP/metrics" | sed -n 's/^podkernel_attach_queue_writes_total //p'; }
w1=$(writes)
sleep 2
[ "$(writes)" = "$w1" ] || fail "the queue controller keeps writing: $w1 then $(writes) writes"
python3 - "$WORK/metrics" <<'PY'
import re, sys
m = open(sys.argv[1]).read()
n = int(re.search(r'(?m)^podkernel_attach_queue_passes_total\{result="ok"\} (\d+)', m).group(1))
t = float(re.search(r'(?m)^podkernel_attach_queue_pass_seconds_total (\S+)', m).group(1))
print("queue passes: %d, %.1f ms each on average (256 Nodes)" % (n, 1000 * t / n))
PY
# SIGTERM: a clean stop (under the sanitizers: nothing leaked)
kill -TERM "$ATTACH_PID_q"
rc=0
wait "$ATTACH_PID_q" || rc=$?
[ "$rc" = 0 ] || { tail -n 30 "$WORK/attach-q.log" >&2; fail "SIGTERM: exit $rc"; }
echo "PASS: attach mode admits through podkernel's queues in the cluster"
