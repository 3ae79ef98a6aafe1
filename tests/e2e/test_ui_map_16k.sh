#!/bin/sh
# End to end: the placement map of a 16,384-host cluster renders completely
# in headless Chromium.  podkerneld simulates the 64 superslices of
# boards/tpu-pod-16k.yaml, a few gangs
# are bound, and the page must list all 1,024 cubes with the counts of the
# cluster's objects and draw every one of the 16,384 hosts, with an overview
# tile per superslice (screenshot: $PODKERNEL_BUILD/ui-map-16k.png).  How long that
# takes is measured by `make bench` (tests/bench/bench_ui_map.sh), not here.
set -eu
. "$PODKERNEL_SRC/tests/e2e/lib.sh"
need_python
need_tool curl chromium

e2e_setup
# registering 16,384 nodes takes a while (one durable commit each)
E2E_START_SECONDS=300 e2e_start_server --simulate-board "$PODKERNEL_SRC/boards/tpu-pod-16k.yaml"
grep -q "16384 simulated nodes" "$WORK/podkerneld.log" || fail "podkerneld did not register 16384 nodes"

# eight gangs of one cube each
: > "$WORK/gangs.yaml"
for g in 0 1 2 3 4 5 6 7; do
	cat >> "$WORK/gangs.yaml" <<EOF
apiVersion: scheduling.k8s.io/v1alpha3
kind: PodGroup
metadata: {name: cube-$g}
spec:
  schedulingPolicy: {gang: {minCount: 16}}
  schedulingConstraints: {topology: [{key: topology.podkernel.dev/cube}]}
---
EOF
	for i in $(seq 0 15); do cat >> "$WORK/gangs.yaml" <<EOF
apiVersion: v1
kind: Pod
metadata: {name: cube-$g-$i}
spec:
  schedulingGroup: {podGroupName: cube-$g}
  containers: [{name: c, image: x, resources: {requests: {google.com/tpu: "4"}}}]
---
EOF
	done
done
podctl apply -f "$WORK/gangs.yaml" > /dev/null || fail "apply gangs"
wait_for 60 has_bound 128 || fail "the gangs were not bound"
sleep 1
# every page of the lists (one list answer holds at most 10,000 objects)
python3 "$PODKERNEL_SRC/tests/e2e/check_ui_map.py" list "$PODKERNEL_SERVER/api/v1/nodes" "$WORK/nodes.json" ||
	fail "list nodes"
python3 "$PODKERNEL_SRC/tests/e2e/check_ui_map.py" list "$PODKERNEL_SERVER/api/v1/pods" "$WORK/pods.json" ||
	fail "list pods"

timeout 300 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run \
	--user-data-dir="$WORK/chromium" --window-size=1400,1000 --virtual-time-budget=60000 \
	--dump-dom "$PODKERNEL_SERVER/ui/#token=$ADMIN_TOKEN" > "$WORK/map.html" 2> "$WORK/chromium.log" ||
	fail "chromium --dump-dom"
python3 "$PODKERNEL_SRC/tests/e2e/check_ui_map.py" dom "$WORK" "$WORK/map.html" ||
	fail "the 16,384-host page is incomplete or wrong"
[ "$(grep -o 'data-cube=' "$WORK/map.html" | wc -l)" = 1024 ] || fail "the page does not list 1024 cubes"
# the overview: one tile per superslice
[ "$(grep -o 'class="tile"' "$WORK/map.html" | wc -l)" = 64 ] || fail "the overview does not have 64 tiles"
rm -rf "$WORK/chromium"
timeout 300 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run \
	--user-data-dir="$WORK/chromium" --window-size=1400,1000 --virtual-time-budget=60000 \
	--screenshot="$WORK/ui-map-16k.png" "$PODKERNEL_SERVER/ui/#token=$ADMIN_TOKEN" > /dev/null 2>> "$WORK/chromium.log" ||
	fail "chromium --screenshot"
mkdir -p "$PODKERNEL_BUILD"
cp "$WORK/ui-map-16k.png" "$PODKERNEL_BUILD/ui-map-16k.png"
echo "16,384 hosts: every cube listed and every host drawn"
