#!/bin/sh
# End to end: the placement map in attach mode.  A stand-in cluster
# (podkerneld --no-scheduling, TLS, token file) with the 256 hosts of one TPU
# superslice; a podkerneld attached to it schedules a gang of schedulerName
# podkernel, and a pod of another scheduler is bound by hand.  The attached
# instance's listener serves /ui/ to anyone and /ui/api/placement only to a
# bearer token the cluster lets list Nodes and Pods; headless Chromium with
# that token must list every cube with the counts of the cluster's objects.
set -eu
. "$PODKERNEL_SRC/tests/e2e/lib.sh"
. "$PODKERNEL_SRC/tests/e2e/attach_lib.sh"
need_python
need_tool curl chromium
trap 'attach_dump' USR1

e2e_setup
attach_cluster_start
attach_register_board 1
cat > "$WORK/pods.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: foreign}
spec:
  schedulerName: default-scheduler
  nodeName: tpu-ss0-h200
  containers: [{name: c, image: x, resources: {requests: {google.com/tpu: "4"}}}]
---
apiVersion: scheduling.k8s.io/v1alpha3
kind: PodGroup
metadata: {name: gang}
spec:
  schedulingPolicy: {gang: {minCount: 4}}
  schedulingConstraints: {topology: [{key: topology.podkernel.dev/cube}]}
EOF
for i in 0 1 2 3; do cat >> "$WORK/pods.yaml" <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: gang-$i}
spec:
  schedulerName: podkernel
  schedulingGroup: {podGroupName: gang}
  containers: [{name: c, image: x, resources: {requests: {google.com/tpu: "4"}}}]
EOF
done
podctl apply -f "$WORK/pods.yaml" > /dev/null || fail "apply"
attach_start a
UI="http://127.0.0.1:$ATTACH_PORT_a/ui"
wait_for 30 curl -sf "http://127.0.0.1:$ATTACH_PORT_a/readyz" || { attach_dump; fail "never ready"; }
wait_for 30 has_bound 5 || { attach_dump; fail "the gang was not bound"; }

[ "$(curl -s -o /dev/null -w '%{http_code}' "$UI/")" = 200 ] || fail "/ui/ is not served"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$UI/api/placement")" = 401 ] ||
	fail "/ui/api/placement answers without a token"
[ "$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer nobody' "$UI/api/placement")" = 401 ] ||
	fail "/ui/api/placement answers a token the cluster does not know"
busy() {
	curl -sf -H "Authorization: Bearer $ADMIN_TOKEN" "$UI/api/placement" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["summary"]["busy"])'
}
five_busy() { [ "$(busy)" = 5 ]; }
wait_for 10 five_busy || fail "the attached map shows $(busy) busy hosts, expected 5"

CHECK="$PODKERNEL_SRC/tests/e2e/check_ui_map.py"
python3 "$CHECK" list "$PODKERNEL_SERVER/api/v1/nodes" "$WORK/nodes.json" || fail "list nodes"
python3 "$CHECK" list "$PODKERNEL_SERVER/api/v1/pods" "$WORK/pods.json" || fail "list pods"
timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run \
	--user-data-dir="$WORK/chromium" --window-size=1400,1000 --virtual-time-budget=20000 \
	--dump-dom "$UI/#token=$ADMIN_TOKEN" > "$WORK/map.html" 2> "$WORK/chromium.log" ||
	fail "chromium --dump-dom"
python3 "$CHECK" dom "$WORK" "$WORK/map.html" || fail "the attached map differs from the cluster"
echo "attach mode: /ui/ serves the cluster's placement to its tokens"
