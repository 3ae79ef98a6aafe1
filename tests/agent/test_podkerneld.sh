#!/bin/sh
# podagent publishing to the real appliance: --register-node creates the Node on
# the first publish, a second publish from other hardware without a board
# drops the topology labels the first one set, keeps a label someone else
# added, and --publish-status replaces the accelerator resource in status.
set -u
: "${PODKERNEL_BIN:?}" "${PODKERNEL_SRC:?}"
AGENT=$PODKERNEL_BIN/podagent
SERVER=$PODKERNEL_BIN/podkerneld
FX=$PODKERNEL_SRC/tests/fixtures/hwloc
. "$PODKERNEL_SRC/tests/need.sh"
need_file "$SERVER" "$FX"
need_tool python3
tmp=$(mktemp -d) || exit 1
srv=
cleanup() { [ -n "$srv" ] && kill "$srv" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
fail=0

"$SERVER" --listen 127.0.0.1:0 --data-dir "$tmp/data" 2>"$tmp/server.log" &
srv=$!
i=0
while ! grep -q "serving on" "$tmp/server.log" && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$tmp/server.log" | head -1)
[ -n "$port" ] || { echo "test_podkerneld: podkerneld did not start"; cat "$tmp/server.log"; exit 1; }
URL=http://127.0.0.1:$port
AG="--once --no-udev --no-netlink --node-name tpu-cube0-h5 --publish $URL --register-node --retries 2 --backoff-ms 50"

"$AGENT" $AG --hwloc-xml "$FX/power8gpudistances.xml" --board "$PODKERNEL_SRC/boards/tpu-cube.yaml" \
	2>"$tmp/e1" || { echo "first publish failed"; cat "$tmp/e1"; fail=1; }
python3 - "$URL" <<'PY' || fail=1
import json, sys, urllib.request
node = json.load(urllib.request.urlopen(sys.argv[1] + "/api/v1/nodes/tpu-cube0-h5"))
labels = node["metadata"]["labels"]
assert labels["topology.podkernel.dev/cube"] == "cube0", labels
assert labels["topology.podkernel.dev/coords"] == "2.0.1", labels
for k, v in (("torus", "cube0"), ("torus-shape", "4x4x4"), ("cube-shape", "4x4x4"),
             ("host-shape", "2x2x1"), ("wraparound", "true")):
    assert labels["topology.podkernel.dev/" + k] == v, (k, labels)
assert node["status"]["capacity"]["google.com/tpu"] == "4", node["status"]
req = urllib.request.Request(sys.argv[1] + "/api/v1/nodes/tpu-cube0-h5",
    data=json.dumps({"metadata": {"labels": {"team": "ml"}}}).encode(), method="PATCH",
    headers={"Content-Type": "application/merge-patch+json"})
urllib.request.urlopen(req).read()
PY
"$AGENT" $AG --hwloc-xml "$FX/24em64t-2n6c2t-pci.xml" --publish-status 2>"$tmp/e2" ||
	{ echo "second publish failed"; cat "$tmp/e2"; fail=1; }
python3 - "$URL" <<'PY' || fail=1
import json, sys, urllib.request
node = json.load(urllib.request.urlopen(sys.argv[1] + "/api/v1/nodes/tpu-cube0-h5"))
labels = node["metadata"]["labels"]
assert labels["team"] == "ml", labels
assert labels["accelerator.podkernel.dev/count"] == "3", labels
assert "topology.podkernel.dev/cube" not in labels and "topology.podkernel.dev/coords" not in labels, labels
assert "topology.podkernel.dev/torus" not in labels and "topology.podkernel.dev/wraparound" not in labels, labels
cap = node["status"]["capacity"]
assert cap.get("nvidia.com/gpu") == "3" and "google.com/tpu" not in cap, cap
print("podkerneld: ok")
PY
[ $fail = 0 ] && echo "test_podkerneld: all passed"
exit $fail
