#!/bin/sh
# podagent's host index from the Node itself: an operator labels a Node whose
# name says nothing (topology.podkernel.dev/host-index=5) and the agent
# publishes that host's topology labels; TPU_WORKER_ID is ignored; a Node
# that does not exist is an error, not a create (without --register-node).
set -eu
. "$PODKERNEL_SRC/tests/e2e/lib.sh"
need_python
need_fixtures
e2e_setup
e2e_start_server
A="--once --no-udev --no-netlink --hwloc-xml $FIXTURES/24em64t-2n6c2t-pci.xml \
	--board $PODKERNEL_SRC/boards/tpu-cube.yaml --publish $PODKERNEL_SERVER --token $ADMIN_TOKEN"
label() { # label NODE KEY
	"$BIN/podctl" get node "$1" -o json |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["labels"].get(sys.argv[1], ""))' "$2"
}

# shellcheck disable=SC2086
"$BIN/podagent" $A --node-name rack7-slot3 2> "$WORK/err" && fail "a missing Node was created"
grep -q "node rack7-slot3 not found" "$WORK/err" || fail "no message: $(cat "$WORK/err")"
"$BIN/podctl" get node rack7-slot3 > /dev/null 2>&1 && fail "the Node exists"

"$BIN/podctl" apply -f - > /dev/null <<'EOF2' || fail "apply node"
apiVersion: v1
kind: Node
metadata:
  name: rack7-slot3
  labels: {topology.podkernel.dev/host-index: "5"}
EOF2
# shellcheck disable=SC2086
TPU_WORKER_ID=9 "$BIN/podagent" $A --node-name rack7-slot3 2> "$WORK/err" ||
	fail "publishing failed: $(cat "$WORK/err")"
[ "$(label rack7-slot3 topology.podkernel.dev/coords)" = 2.0.1 ] ||
	fail "host 5's coordinates not published: $(label rack7-slot3 topology.podkernel.dev/coords)"
[ "$(label rack7-slot3 topology.podkernel.dev/cube)" = cube0 ] || fail "cube label"
[ "$(label rack7-slot3 topology.podkernel.dev/host-index)" = 5 ] || fail "the operator's label changed"
"$BIN/podctl" get node rack7-slot3 -o json | grep -q 'hostIndex.":5' || fail "link report hostIndex"
echo "ok"
