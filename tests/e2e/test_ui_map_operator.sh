#!/bin/sh
# End to end: what an operator needs from the placement map, in headless
# Chromium (ui_operator.py over the DevTools protocol).  podkerneld runs the
# 512 hosts of boards/tpu-superslice.yaml with a 4x4x4 TPU slice, six cube
# gangs side by side, a pod using a quarter of a host, a pending
# gang, a cordoned and a NoSchedule-tainted host.  The page must: say that
# a wrong token was rejected; show the time of the data, not a generation;
# give every superslice an overview tile with the utilisation the objects
# give (computed here from the Nodes and Pods, not by podkerneld); fill each
# cube's hosts by their scarcest resource and count its tainted hosts;
# find hosts by name, by gang and by pod, and filter pending gangs and
# cordoned or tainted hosts; outline the slice as one box; and give gangs in
# the same or neighbouring cubes different colours.  Screenshots go to
# $PODKERNEL_BUILD/ui-map-*.png (the README's are docs/placement-map*.png).
set -eu
. "$PODKERNEL_SRC/tests/e2e/lib.sh"
need_python
need_tool curl chromium

e2e_setup
e2e_start_server --simulate-board "$PODKERNEL_SRC/boards/tpu-superslice.yaml"
API="$PODKERNEL_SERVER"
api() { curl -sS -H "Authorization: Bearer $ADMIN_TOKEN" "$@"; }
merge_patch() {
	api -X PATCH -H 'Content-Type: application/merge-patch+json' -d "$2" "$API$1" > /dev/null ||
		fail "PATCH $1"
}

gang() { # gang NS NAME PODS TPU [SHAPE]
	printf 'apiVersion: scheduling.k8s.io/v1alpha3\nkind: PodGroup\nmetadata:\n  name: %s\n  namespace: %s\n' "$2" "$1"
	[ -n "${5:-}" ] && printf '  annotations: {scheduling.podkernel.dev/slice-shape: "%s"}\n' "$5"
	printf 'spec:\n  schedulingPolicy: {gang: {minCount: %s}}\n' "$3"
	[ "$3" = 16 ] && printf '  schedulingConstraints: {topology: [{key: topology.podkernel.dev/cube}]}\n'
	for i in $(seq 0 $(($3 - 1))); do
		printf -- '---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s-%s, namespace: %s}\n' "$2" "$i" "$1"
		printf 'spec:\n  schedulingGroup: {podGroupName: %s}\n' "$2"
		printf '  containers: [{name: c, image: x, resources: {requests: {google.com/tpu: "%s"}}}]\n' "$4"
	done
	printf -- '---\n'
}
{
	printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: tpu}\n---\n'
	gang tpu slice-a 16 4 4x4x4
	for g in a b c d e f; do gang tpu "train-$g" 16 4; done
	gang tpu too-big 2 8
	# a quarter of one host (60 of 240 CPUs, 1 of 4 TPUs), bound by name: no gang fits there
	printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: one-quarter, namespace: tpu}\n'
	printf 'spec:\n  nodeName: tpu-ss1-h200\n  containers: [{name: c, image: x, resources: {requests: {cpu: "60", google.com/tpu: "1"}}}]\n'
} > "$WORK/objs.yaml"
podctl apply -f "$WORK/objs.yaml" > /dev/null || fail "apply"
merge_patch /api/v1/nodes/tpu-ss1-h20 '{"spec":{"unschedulable":true}}'
merge_patch /api/v1/nodes/tpu-ss0-h30 \
	'{"spec":{"taints":[{"key":"maintenance","value":"true","effect":"NoSchedule"}]}}'
wait_for 30 has_bound 113 || fail "the gangs were not bound ($(bound_count) pods)"
wait_for 10 sh -c "'$BIN/podctl' describe pg -n tpu too-big | grep -q Unschedulable" ||
	fail "too-big has no Unschedulable condition"
sleep 1 # the map follows the change stream: let the last conditions land

python3 "$PODKERNEL_SRC/tests/e2e/check_ui_map.py" list "$API/api/v1/nodes" "$WORK/nodes.json" || fail "list nodes"
python3 "$PODKERNEL_SRC/tests/e2e/check_ui_map.py" list "$API/api/v1/pods" "$WORK/pods.json" || fail "list pods"
api "$API/ui/api/placement" > "$WORK/placement.json" || fail "GET /ui/api/placement"
mkdir -p "$PODKERNEL_BUILD"
python3 "$PODKERNEL_SRC/tests/e2e/ui_operator.py" "$API/ui/" "$ADMIN_TOKEN" "$WORK" "$PODKERNEL_BUILD" ||
	fail "the map does not show what an operator needs"
echo "placement map: token message, data time, overview, fill, taints, search, filters, slice box, colours"
