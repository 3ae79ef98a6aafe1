#!/bin/sh
# End to end: preemption across two workloads of different priority.  A
# low-priority training hierarchy (disruptionMode all: one preemption unit)
# fills every host; a high-priority gang arrives.  The whole low unit is
# marked DisruptionTarget (PreemptionByScheduler), seen on a `podctl get -w`
# stream, and deleted; the high-priority gang is bound inside one cube.  The
# -v 4 log holds the recursive trace tagged compositepodgroup.
set -eu
. "$PODKERNEL_SRC/tests/e2e/lib.sh"
need_python
e2e_setup
e2e_start_server -v 4

cat > "$WORK/setup.yaml" <<'EOF'
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: low}
value: 100
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 10000
EOF
for i in 0 1 2 3; do cat >> "$WORK/setup.yaml" <<EOF
---
apiVersion: v1
kind: Node
metadata: {name: host-$i, labels: {topology.podkernel.dev/cube: c$((i / 2))}}
status: {allocatable: {cpu: "16", google.com/tpu: "4"}}
EOF
done

cat > "$WORK/low.yaml" <<'EOF'
apiVersion: scheduling.k8s.io/v1alpha3
kind: CompositePodGroup
metadata: {name: low}
spec:
  workloadRef: {workloadName: low, templateName: root}
  schedulingPolicy: {gang: {minGroupCount: 2}}
  disruptionMode: {all: {}}
  priorityClassName: low
EOF
for g in 0 1; do
	cat >> "$WORK/low.yaml" <<EOF
---
apiVersion: scheduling.k8s.io/v1alpha3
kind: PodGroup
metadata: {name: low-$g}
spec:
  workloadRef: {workloadName: low, templateName: shard}
  parentCompositePodGroupName: low
  schedulingPolicy: {gang: {minCount: 2}}
  schedulingConstraints: {topology: [{key: topology.podkernel.dev/cube}]}
  disruptionMode: {all: {}}
  priorityClassName: low
EOF
	for i in 0 1; do cat >> "$WORK/low.yaml" <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: low-$g-$i}
spec:
  schedulingGroup: {podGroupName: low-$g}
  priorityClassName: low
  containers: [{name: c, image: x, resources: {requests: {google.com/tpu: "4"}}}]
EOF
	done
done

cat > "$WORK/high.yaml" <<'EOF'
apiVersion: scheduling.k8s.io/v1alpha3
kind: PodGroup
metadata: {name: high}
spec:
  workloadRef: {workloadName: high, templateName: high}
  schedulingPolicy: {gang: {minCount: 2}}
  schedulingConstraints: {topology: [{key: topology.podkernel.dev/cube}]}
  priorityClassName: high
EOF
for i in 0 1; do cat >> "$WORK/high.yaml" <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: high-$i}
spec:
  schedulingGroup: {podGroupName: high}
  priorityClassName: high
  containers: [{name: c, image: x, resources: {requests: {google.com/tpu: "4"}}}]
EOF
done

podctl apply -f "$WORK/setup.yaml" > /dev/null || fail "apply setup"
podctl apply -f "$WORK/low.yaml" > /dev/null || fail "apply low"
wait_for 15 has_bound 4 default || fail "the low-priority workload was not scheduled"
check_placement

podctl get pods -w -o json > "$WORK/watch.json" 2>&1 &
WATCH=$!
E2E_PIDS="$E2E_PIDS $WATCH"
sleep 0.5
podctl apply -f "$WORK/high.yaml" > /dev/null || fail "apply high"
wait_for 15 sh -c "'$BIN/podctl' get pod high-0 | grep -q Bound && '$BIN/podctl' get pod high-1 | grep -q Bound" ||
	fail "the high-priority gang was not bound"
sleep 0.5
kill "$WATCH" 2>/dev/null || true
for p in low-0-0 low-0-1 low-1-0 low-1-1; do
	podctl get pod "$p" > /dev/null 2>&1 && fail "victim $p of the all-mode unit still exists"
done
grep -q '"PreemptionByScheduler"' "$WORK/watch.json" ||
	fail "no DisruptionTarget/PreemptionByScheduler seen on the watch stream"
grep -q '"type": "DELETED"' "$WORK/watch.json" || fail "no DELETED event on the watch stream"
grep -c "preempted pod default/low-" "$WORK/podkerneld.log" | grep -q '^4$' ||
	fail "expected 4 preempted pods in the log"
check_placement
# -v 4: the recursive trace, greppable by the KEP's troubleshooting word
grep -q 'sched trace \[compositepodgroup\].*CompositePodGroup default/low' "$WORK/podkerneld.log" ||
	fail "no compositepodgroup trace at -v 4"
grep -q 'sched trace .*preempting pod default/low-' "$WORK/podkerneld.log" ||
	fail "no preemption in the trace"
# /metrics: the KEP's scheduler metrics, served by podkerneld itself
metrics() {
	curl -sSf --max-time 10 ${PODKERNEL_CA_FILE:+--cacert "$PODKERNEL_CA_FILE"} \
		-H "Authorization: Bearer $PODKERNEL_TOKEN" "$PODKERNEL_SERVER/metrics"
}
metrics > "$WORK/metrics.txt" || fail "GET /metrics"
for m in scheduler_podgroup_schedule_attempts_total scheduler_queued_entities \
	scheduler_podgroup_scheduling_algorithm_duration_seconds_bucket \
	scheduler_workload_preemption_attempts_total scheduler_workload_preemption_victims \
	scheduler_generated_placements_total scheduler_placement_evaluation_duration_seconds_count \
	apiserver_request_total podkernel_store_writes_total; do
	grep -q "^$m" "$WORK/metrics.txt" || fail "/metrics lacks $m"
done
grep -Eq '^scheduler_workload_preemption_attempts_total(\{[^}]*\})? [1-9]' "$WORK/metrics.txt" ||
	fail "/metrics counts no preemption attempt"
podctl describe pg high | sed -n '/Placement/,$p'
echo "ok"
