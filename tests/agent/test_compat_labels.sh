#!/bin/sh
# --compatible-labels: the documented mapping onto labels other tools publish
# (NVIDIA GPU Feature Discovery's nvidia.com/gpu.*, GKE's gke-tpu-topology),
# only when asked, only where they apply, and an unknown set is bad usage.
set -u
: "${PODKERNEL_BIN:?}" "${PODKERNEL_SRC:?}"
AGENT=$PODKERNEL_BIN/podagent
FX=$PODKERNEL_SRC/tests/fixtures/hwloc
. "$PODKERNEL_SRC/tests/need.sh"
need_tool python3
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
run() { # run OUT ARGS...: the Node's labels as JSON in $tmp/OUT
	out=$1
	shift
	"$AGENT" --once --no-udev --no-netlink -o json "$@" > "$tmp/$out.json" 2> "$tmp/$out.err" ||
		{ echo "podagent $*: failed"; cat "$tmp/$out.err"; fail=1; }
}
B="--board $PODKERNEL_SRC/boards/tpu-cube.yaml --node-name tpu-cube0-h5"
# shellcheck disable=SC2086
run gpu --hwloc-xml "$FX/power8gpudistances.xml" $B --compatible-labels nvidia,gke
# shellcheck disable=SC2086
run plain --hwloc-xml "$FX/power8gpudistances.xml" $B
run cpu --hwloc-xml "$FX/192em64t-24n8c2t.xml" --node-name cpu-1 --compatible-labels nvidia,gke
python3 - "$tmp" <<'PY' || fail=1
import json, sys
lab = lambda n: json.load(open("%s/%s.json" % (sys.argv[1], n)))["metadata"]["labels"]
g = lab("gpu")
assert g["nvidia.com/gpu.present"] == "true" and g["nvidia.com/gpu.count"] == "4", g
assert g["cloud.google.com/gke-tpu-topology"] == "4x4x4", g    # the board's torus
assert "nvidia.com/gpu.product" not in g, g                    # no name known offline
p = lab("plain")
assert not [k for k in p if k.startswith(("nvidia.com/", "cloud.google.com/"))], p
c = lab("cpu")
assert not [k for k in c if k.startswith(("nvidia.com/", "cloud.google.com/"))], c
print("compatible labels: ok")
PY
"$AGENT" --once --compatible-labels nvidia,foo > /dev/null 2> "$tmp/bad.err"
[ $? = 2 ] || { echo "unknown set: expected exit 2"; fail=1; }
grep -q 'unknown set "foo"' "$tmp/bad.err" || { echo "unknown set: no message"; fail=1; }
[ $fail = 0 ] && echo "test_compat_labels: all passed"
exit $fail
