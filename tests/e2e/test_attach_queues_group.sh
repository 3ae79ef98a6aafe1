#!/bin/sh
# Attach mode with podkernel's queues (--queues=podkernel) and a Kueue plain
# pod group: three queued pods labelled kueue.x-k8s.io/pod-group-name: trio
# and annotated kueue.x-k8s.io/pod-group-total-count: "3" in the stand-in
# cluster (podkerneld --no-scheduling, which gates them and puts them in
# PodGroup trio at creation, as standalone does), a ClusterQueue with quota
# for them.  While two exist both stay gated, told why.  With the third the
# group is admitted whole: the attached podkerneld creates PodGroup trio in
# the cluster (a gang of 3, labelled queue.podkernel.dev/kueue-pod-group),
# then ungates the three pods, each under the resourceVersion it read; the
# scheduler places them as one gang (all three bound, the PodGroup's
# PodGroupInitiallyScheduled condition True).  The pods deleted, the
# controller deletes the PodGroup it made.  Then an attached podkerneld
# whose workload API the cluster does not serve (--workload-api
# example.com/v1) cannot create a PodGroup: a new group's pods stay gated,
# all of them, their pending reason naming why, and are never bound.
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
      resources: [{name: cpu, nominalQuota: "3"}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: group-queue, namespace: default}
spec: {clusterQueue: team}
EOF
podctl apply -f "$WORK/queues.yaml" > /dev/null || fail "apply queues.yaml"

# member GROUP NAME: a queued pod of Kueue pod group GROUP (of 3)
member() {
	cat > "$WORK/$2.yaml" <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $2
  labels: {kueue.x-k8s.io/queue-name: group-queue, kueue.x-k8s.io/pod-group-name: $1}
  annotations: {kueue.x-k8s.io/pod-group-total-count: "3"}
spec:
  schedulerName: podkernel
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
EOF
	podctl apply -f "$WORK/$2.yaml" > /dev/null || fail "apply pod $2"
}

# podfield NAME FIELD: gates, admission, pending-reason, group or node
podfield() {
	podctl get pod "$1" -o json 2> /dev/null | python3 -c '
import json, sys
p = json.load(sys.stdin)
a = p["metadata"].get("annotations", {})
f = sys.argv[1]
if f == "gates":
    print(",".join(g["name"] for g in p["spec"].get("schedulingGates", [])))
elif f == "group":
    print(p["spec"].get("schedulingGroup", {}).get("podGroupName", "") or
          p["metadata"].get("labels", {}).get("scheduling.podkernel.dev/pod-group", ""))
elif f == "node":
    print(p["spec"].get("nodeName", ""))
else:
    print(a.get("queue.podkernel.dev/" + f, ""))' "$2"
}
told() { case "$(podfield "$1" pending-reason)" in *"$2"*) ;; *) return 1 ;; esac; }

member trio trio-0
member trio trio-1
wait_for 20 told trio-0 "2 of its 3 pods exist" || { attach_dump; fail "trio-0 not told it waits for its group: $(podfield trio-0 pending-reason)"; }
told trio-1 "2 of its 3 pods exist" || fail "trio-1 not told it waits: $(podfield trio-1 pending-reason)"
for p in trio-0 trio-1; do
	[ "$(podfield $p gates)" = kueue.x-k8s.io/admission ] || fail "$p ungated before its group is whole"
done
podctl get podgroup trio > /dev/null 2>&1 && fail "PodGroup trio made before its group is whole"

member trio trio-2
# group_fields NAME: the PodGroup's minCount, its label, its condition PodGroupInitiallyScheduled
group_fields() {
	podctl get podgroup "$1" -o json 2> /dev/null | python3 -c '
import json, sys
g = json.load(sys.stdin)
c = [x["status"] for x in g.get("status", {}).get("conditions", []) if x["type"] == "PodGroupInitiallyScheduled"]
print(g["spec"].get("schedulingPolicy", {}).get("gang", {}).get("minCount", ""),
      g["metadata"].get("labels", {}).get("queue.podkernel.dev/kueue-pod-group", "-"),
      c[0] if c else "-")'
}
all_bound() {
	for p in trio-0 trio-1 trio-2; do [ -n "$(podfield $p node)" ] || return 1; done
}
wait_for 30 all_bound || { attach_dump; fail "the pod group was not admitted and bound: $(group_fields trio)"; }
for p in trio-0 trio-1 trio-2; do
	[ "$(podfield $p admission)" = team/ss0 ] || fail "$p admission: $(podfield $p admission)"
	[ -z "$(podfield $p gates)" ] || fail "$p still gated"
	[ "$(podfield $p group)" = trio ] || fail "$p does not name PodGroup trio: $(podfield $p group)"
	[ -z "$(podfield $p pending-reason)" ] || fail "the admitted $p still has a pending reason"
done
gang_scheduled() { [ "$(group_fields trio)" = "3 true True" ]; }
wait_for 20 gang_scheduled || { attach_dump; fail "PodGroup trio (minCount, label, scheduled): $(group_fields trio)"; }
# one gang in one domain: the three on nodes of the flavor's superslice
for p in trio-0 trio-1 trio-2; do
	ss=$(podctl get node "$(podfield $p node)" -o jsonpath='{.metadata.labels.topology\.podkernel\.dev/superslice}')
	[ "$ss" = ss0 ] || fail "$p bound outside the flavor's superslice: $ss"
done
grep -q "PodGroup default/trio created for its Kueue pod group" "$WORK/attach-q.log" ||
	fail "the attached podkerneld did not create PodGroup trio"

# The group done and its pods deleted: the PodGroup made for it goes too.
podctl delete pod trio-0 trio-1 trio-2 > /dev/null || fail "delete the trio pods"
group_gone() { ! podctl get podgroup trio > /dev/null 2>&1; }
wait_for 30 group_gone || { attach_dump; fail "PodGroup trio was not deleted once no pod named it"; }

# A cluster that does not serve the PodGroup kind the instance writes: the
# group is admitted by quota but its PodGroup cannot be created, so its
# pods stay gated (never placed one by one), each told why.
kill -TERM "$ATTACH_PID_q"
rc=0
wait "$ATTACH_PID_q" || rc=$?
[ "$rc" = 0 ] || { tail -n 30 "$WORK/attach-q.log" >&2; fail "SIGTERM: exit $rc"; }
attach_start nogroup --queues=podkernel --workload-api example.com/v1
wait_for 20 curl -sf "http://127.0.0.1:$ATTACH_PORT_nogroup/readyz" || { attach_dump; fail "nogroup never ready"; }
member solo solo-0
member solo solo-1
member solo solo-2
held() {
	for p in solo-0 solo-1 solo-2; do
		told $p "PodGroup solo of its pod group could not be created in the cluster" || return 1
	done
}
wait_for 30 held || { attach_dump; fail "the group's pods were not held with the reason: $(podfield solo-0 pending-reason)"; }
sleep 2
for p in solo-0 solo-1 solo-2; do
	[ "$(podfield $p gates)" = kueue.x-k8s.io/admission ] || fail "$p ungated without its PodGroup"
	[ -z "$(podfield $p node)" ] || fail "$p bound without its PodGroup"
	[ -z "$(podfield $p admission)" ] || fail "$p annotated admitted without its PodGroup"
done
echo "solo-0: $(podfield solo-0 pending-reason)"
# settled: no pass keeps trying to create it while nothing changes
tries() { grep -c "creating PodGroup default/solo" "$WORK/attach-nogroup.log" || true; }
t1=$(tries)
sleep 2
[ "$(tries)" = "$t1" ] || fail "the PodGroup keeps being tried: $t1 then $(tries) times"
echo "PodGroup solo tried $t1 times"
kill -TERM "$ATTACH_PID_nogroup"
rc=0
wait "$ATTACH_PID_nogroup" || rc=$?
[ "$rc" = 0 ] || { tail -n 30 "$WORK/attach-nogroup.log" >&2; fail "SIGTERM: exit $rc"; }
echo "PASS: attach mode admits a Kueue pod group as one gang, or holds it gated"
