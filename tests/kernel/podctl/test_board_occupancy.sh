#!/bin/sh
# TPU slices from the command line: the torus labels of `podctl board nodes`,
# `podctl schedule` binding a slice-shape PodGroup as a box (the pods carry
# their slice coordinates and worker ids), and `podctl board occupancy`
# printing the used and free boxes before and after.
set -u
PODCTL="${PODKERNEL_BIN:?}/podctl"
SRC="${PODKERNEL_SRC:?}"
[ -x "$PODCTL" ] || { echo "FAIL: no podctl in $PODKERNEL_BIN" >&2; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
expect() {
	want=$1; shift
	"$@" >"$T/out" 2>"$T/err"; rc=$?
	[ "$rc" = "$want" ] || fail "$* exited $rc, expected $want: $(head -3 "$T/err")"
}
has() { grep -qF -- "$2" "$T/$1" || fail "$1 lacks '$2': $(head -20 "$T/$1")"; }

# The nodes of one 4x4x4 cube with wraparound (16 hosts of 2x2x1 chips) carry
# the geometry the scheduler reads.
expect 0 "$PODCTL" board nodes "$SRC/boards/tpu-cube.yaml" -o yaml
cp "$T/out" "$T/nodes.yaml"
has nodes.yaml "topology.podkernel.dev/torus: cube0"
has nodes.yaml "topology.podkernel.dev/torus-shape: \"4x4x4\""
has nodes.yaml "topology.podkernel.dev/cube-shape: \"4x4x4\""
has nodes.yaml "topology.podkernel.dev/host-shape: \"2x2x1\""
has nodes.yaml "topology.podkernel.dev/wraparound: \"true\""
# a board without torus publishes none of them
expect 0 "$PODCTL" board nodes "$SRC/boards/gpu-cluster.yaml"
grep -q 'torus' "$T/out" && fail "a board without torus published torus labels"

# The two middle layers (z = 1, 2: hosts 4-11) are busy.
: >"$T/busy.yaml"
for h in 4 5 6 7 8 9 10 11; do
	printf -- '---\napiVersion: v1\nkind: Pod\nmetadata: {name: busy-%d}\nspec:\n  nodeName: tpu-cube0-h%d\n  containers: [{name: c, image: x, resources: {requests: {google.com/tpu: "4"}}}]\n' "$h" "$h" >>"$T/busy.yaml"
done
expect 0 "$PODCTL" board occupancy -f "$T/nodes.yaml" -f "$T/busy.yaml"
has out "superslice cube0: torus 4x4x4 chips, hosts 2x2x1, cubes 4x4x4, wraparound"
has out "hosts 16: used 8 (pods on 8, cordoned 0, missing 0), free 8"
has out "largest free box: 4x4x2 at 0.0.3"
has out "free cubes: 0 of 1"
has out "used boxes (chips at chip origin):"
has out "4x4x2 at 0.0.1"
has out "4x4x1 at 0.0.0, 4x4x1 at 0.0.3"
expect 0 "$PODCTL" board occupancy -f "$T/nodes.yaml" -f "$T/busy.yaml" --map
has out "  z=1 (chips 1..1)"
[ "$(grep -c '^    ##$' "$T/out")" = 4 ] || fail "map: expected 4 busy rows: $(cat "$T/out")"
[ "$(grep -c '^    \.\.$' "$T/out")" = 4 ] || fail "map: expected 4 free rows"

# A 4x4x2 slice (8 hosts) fits only across the seam: layers z = 3 and z = 0.
cat >"$T/slice.yaml" <<'YAML'
apiVersion: scheduling.k8s.io/v1alpha3
kind: PodGroup
metadata:
  name: train
  annotations: {scheduling.podkernel.dev/slice-shape: 4x4x2}
spec:
  schedulingPolicy: {gang: {minCount: 8}}
YAML
for i in 0 1 2 3 4 5 6 7; do
	printf -- '---\napiVersion: v1\nkind: Pod\nmetadata: {name: train-%d}\nspec:\n  schedulingGroup: {podGroupName: train}\n  containers: [{name: c, image: x, resources: {requests: {google.com/tpu: "4"}}}]\n' "$i" >>"$T/slice.yaml"
done
expect 0 "$PODCTL" validate -f "$T/slice.yaml"
expect 0 "$PODCTL" schedule -f "$T/nodes.yaml" -f "$T/busy.yaml" -f "$T/slice.yaml" -o json
cp "$T/out" "$T/scheduled.json"
python3 - "$T/scheduled.json" <<'PY' || fail "slice pods: wrong bindings or annotations"
import json, sys
pods = {o["metadata"]["name"]: o for o in json.load(open(sys.argv[1]))["items"] if o["kind"] == "Pod"}
want = {"train-0": ("tpu-cube0-h12", "0.0.0", "0"), "train-3": ("tpu-cube0-h15", "2.2.0", "3"),
        "train-4": ("tpu-cube0-h0", "0.0.1", "4"), "train-7": ("tpu-cube0-h3", "2.2.1", "7")}
ok = True
for name, (node, coords, worker) in want.items():
    p = pods[name]
    ann = p["metadata"].get("annotations", {})
    got = (p["spec"].get("nodeName"), ann.get("scheduling.podkernel.dev/slice-coords"),
           ann.get("scheduling.podkernel.dev/worker-id"))
    if got != (node, coords, worker):
        print("FAIL: %s: %s, expected %s" % (name, got, (node, coords, worker)))
        ok = False
if "annotations" in pods["busy-4"]["metadata"]:
    print("FAIL: a pod outside the slice got slice annotations"); ok = False
sys.exit(0 if ok else 1)
PY
expect 0 "$PODCTL" board occupancy -f "$T/nodes.yaml" -f "$T/scheduled.json"
has out "hosts 16: used 16 (pods on 16, cordoned 0, missing 0), free 0"
has out "largest free box: none"

# Errors: usage, unreadable input, nothing to show.
expect 2 "$PODCTL" board occupancy
has err "no -f FILE"
expect 2 "$PODCTL" board occupancy -f "$T/none.yaml"
expect 2 "$PODCTL" board occupancy -f "$T/busy.yaml"
has err "no node carries the torus labels"
expect 2 "$PODCTL" board occupancy -f "$T/nodes.yaml" --superslice ss9
has err "no such superslice"
expect 2 "$PODCTL" board occupancy -f "$T/nodes.yaml" --frob
has err "unexpected argument '--frob'"

[ "$fails" = 0 ] && echo "test_board_occupancy: all passed"
exit $((fails > 0))
