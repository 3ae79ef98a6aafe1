#!/bin/sh
# End to end: podkerneld is killed with SIGKILL while a stream of gangs is
# being submitted and scheduled, then restarted on the same data directory.
# Pods bound before the kill keep their node, pending ones get scheduled,
# every gang is whole and inside one cube, and no node is overcommitted.
set -eu
. "$PODKERNEL_SRC/tests/e2e/lib.sh"
need_python
e2e_setup

# 8 hosts of 4 TPUs in 4 cubes; 6 gangs of two 4-TPU pods (one cube each)
# and 4 single pods: more than fits, so capacity decides.
{
	for i in 0 1 2 3 4 5 6 7; do cat <<EOF
---
apiVersion: v1
kind: Node
metadata: {name: host-$i, labels: {topology.podkernel.dev/cube: c$((i / 2))}}
status: {allocatable: {cpu: "16", google.com/tpu: "4"}}
EOF
	done
} > "$WORK/nodes.yaml"
{
	for g in 0 1 2 3 4 5; do cat <<EOF
---
apiVersion: scheduling.k8s.io/v1alpha3
kind: PodGroup
metadata: {name: gang-$g}
spec:
  workloadRef: {workloadName: stream, templateName: gang}
  schedulingPolicy: {gang: {minCount: 2}}
  schedulingConstraints: {topology: [{key: topology.podkernel.dev/cube}]}
EOF
		for i in 0 1; do cat <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: gang-$g-$i}
spec:
  schedulingGroup: {podGroupName: gang-$g}
  containers: [{name: c, image: x, resources: {requests: {google.com/tpu: "4"}}}]
EOF
		done
	done
	for i in 0 1 2 3; do cat <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: single-$i}
spec:
  containers: [{name: c, image: x, resources: {requests: {google.com/tpu: "4"}}}]
EOF
	done
} > "$WORK/stream.yaml"

e2e_start_server -v 2
podctl apply -f "$WORK/nodes.yaml" > /dev/null || fail "apply nodes"
# Submit the stream one object at a time; kill the server once the first
# gang is bound, while the rest is still arriving.
csplit -s -z -f "$WORK/obj-" "$WORK/stream.yaml" '/^---$/' '{*}'
(for f in "$WORK"/obj-*; do podctl apply -f "$f" || exit 0; sleep 0.05; done) \
	> "$WORK/apply1.log" 2>&1 &
APPLY=$!
wait_for 10 has_bound 2 default || fail "nothing bound before the kill"
kill -9 "$SERVER_PID"
wait "$APPLY" 2>/dev/null || true
echo "killed podkerneld after $(grep -c created "$WORK/apply1.log" || true) of 28 objects"

# What the dead server had committed, read back after restart.
e2e_start_server -v 2
podctl get pods -o json > "$WORK/before.json" || fail "get pods after restart"
podctl apply -f "$WORK/stream.yaml" > /dev/null || fail "re-apply the stream"
wait_for 20 has_bound 8 default || fail "the restarted appliance did not fill the cluster"
sleep 1
check_placement
[ "$(bound_count default)" -eq 8 ] || fail "more pods bound than hosts: $(bound_count default)"
podctl get pods -o json > "$WORK/after.json"
python3 - "$WORK/before.json" "$WORK/after.json" <<'EOF' || fail "a binding changed across the restart"
import json, sys
before = {p["metadata"]["name"]: p["spec"].get("nodeName") for p in json.load(open(sys.argv[1]))["items"]}
after = {p["metadata"]["name"]: p["spec"].get("nodeName") for p in json.load(open(sys.argv[2]))["items"]}
moved = [n for n, node in before.items() if node and after.get(n) != node]
print(f"restart: {sum(1 for v in before.values() if v)} bound before, "
      f"{sum(1 for v in after.values() if v)} after; moved: {moved}")
sys.exit(1 if moved else 0)
EOF
podctl get pods
echo "ok"
