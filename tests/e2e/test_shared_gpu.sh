#!/bin/sh
# Shared GPUs end to end (KEP-5075 consumable capacity): podkerneld
# --simulate-board on the gpu-cluster board publishes each H100 as a device
# several allocations share (capacity `share` = 1).  Four pods, each with a
# claim for a quarter of a GPU, are placed together on one device, each
# claim holding a share of it (shareID, consumedCapacity share=250m);
# `podctl describe pod` shows the device and what its share consumed.
# Deleting a pod frees its share: a fifth quarter then fits on that device.
set -eu
. "$PODKERNEL_SRC/tests/e2e/lib.sh"

expect_rc() {
	want=$1
	shift
	set +e
	"$@" > "$WORK/out" 2> "$WORK/err"
	rc=$?
	set -e
	[ "$rc" = "$want" ] || fail "$* exited $rc, expected $want: $(head -5 "$WORK/err")"
}

e2e_setup
e2e_start_server --simulate-board "$PODKERNEL_SRC/boards/gpu-cluster.yaml"
{
	cat <<'EOF'
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]
EOF
	for i in 0 1 2 3 4; do
		cat <<EOF
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: quarter-$i}
spec:
  devices:
    requests:
    - {name: gpu, exactly: {deviceClassName: gpu.example.com, capacity: {requests: {share: 250m}}}}
EOF
	done
	for i in 0 1 2 3; do
		cat <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: frac-$i}
spec:
  resourceClaims: [{name: gpu, resourceClaimName: quarter-$i}]
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}, claims: [{name: gpu}]}}]
EOF
	done
} > "$WORK/objs.yaml"
expect_rc 0 podctl apply -f "$WORK/objs.yaml"
wait_for 20 has_bound 4 || fail "the four quarter-GPU pods are not bound: $(podctl get pods 2>&1)"

# every claim is one share of the same device
devices() {
	for i in 0 1 2 3; do
		podctl get resourceclaim "quarter-$i" -o json |
			python3 -c 'import json,sys; r=json.load(sys.stdin)["status"]["allocation"]["devices"]["results"]; print(len(r), r[0]["pool"], r[0]["device"], r[0]["consumedCapacity"]["share"], r[0]["shareID"])'
	done
}
wait_for 10 sh -c "'$BIN/podctl' get resourceclaim quarter-3 -o json | grep -q shareID" ||
	fail "claim quarter-3 has no share"
devices > "$WORK/devs" || fail "claims not allocated: $(cat "$WORK/devs")"
[ "$(cut -d' ' -f1-4 "$WORK/devs" | sort -u | wc -l)" = 1 ] ||
	fail "the quarters are not on one device: $(cat "$WORK/devs")"
grep -q '^1 [^ ]* gpu-[0-9] 250m ' "$WORK/devs" || fail "consumed capacity: $(cat "$WORK/devs")"
[ "$(cut -d' ' -f5 "$WORK/devs" | sort -u | wc -l)" = 4 ] || fail "share IDs not distinct"
dev=$(head -1 "$WORK/devs" | cut -d' ' -f2-3)

expect_rc 0 podctl describe pod frac-2
grep -q "gpu.example.com/${dev% *}/${dev#* } share=250m (share " "$WORK/out" ||
	fail "describe does not show the share: $(cat "$WORK/out")"

# a deleted pod's share is freed once its claim is released
expect_rc 0 podctl delete pod frac-0
expect_rc 0 podctl delete resourceclaim quarter-0
cat > "$WORK/fifth.yaml" <<EOF
apiVersion: v1
kind: Pod
metadata: {name: frac-4}
spec:
  nodeSelector: {kubernetes.io/hostname: ${dev% *}}
  resourceClaims: [{name: gpu, resourceClaimName: quarter-4}]
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}, claims: [{name: gpu}]}}]
EOF
expect_rc 0 podctl apply -f "$WORK/fifth.yaml"
wait_for 20 sh -c "'$BIN/podctl' get resourceclaim quarter-4 -o json | grep -q '\"device\": \"${dev#* }\"'" ||
	fail "the fifth quarter is not on the freed device: $(podctl get resourceclaim quarter-4 -o json)"
echo "ok"
