#!/bin/sh
# End to end: the placement map in a real browser.  podkerneld runs the 512
# simulated hosts of boards/tpu-superslice.yaml with the three KEP-6012 user
# stories, a TPU slice gang (slice-shape annotation), a gang that cannot fit
# (pending, with its reason), a cordoned host and a podagent node whose agent
# died (unreachable after the grace period).  Headless Chromium loads /ui/:
# without a token it asks for one; with the token its DOM must list every
# cube with exactly the busy/free/cordoned/unreachable counts the cluster's
# own objects give (check_ui_map.py computes them independently) and every
# domain drawn; #node=NAME shows that host's pods.  A screenshot goes to
# $PODKERNEL_BUILD/ui-map.png.  `podctl map` must print the occupancy of
# /ui/api/placement.  Hovering and clicking a host (DevTools protocol,
# ui_interact.py) name it, and a cordon shows up without a reload.
set -eu
. "$PODKERNEL_SRC/tests/e2e/lib.sh"
need_python
need_fixtures
need_tool curl chromium

CHECK="$PODKERNEL_SRC/tests/e2e/check_ui_map.py"
e2e_setup
export PODKERNEL_NODE_GRACE_SECONDS=2
e2e_node_token edge-0 > /dev/null
e2e_start_server --simulate-board "$PODKERNEL_SRC/boards/tpu-superslice.yaml"
API="$PODKERNEL_SERVER"

# browse ARGS...: headless Chromium with a throw-away profile (root needs --no-sandbox)
browse() {
	timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
		--no-first-run --user-data-dir="$WORK/chromium" --window-size=1400,1000 \
		--virtual-time-budget=20000 "$@" 2>> "$WORK/chromium.log"
}
api() { curl -sS -H "Authorization: Bearer $ADMIN_TOKEN" "$@"; }
merge_patch() {
	api -X PATCH -H 'Content-Type: application/merge-patch+json' -d "$2" "$API$1" > /dev/null ||
		fail "PATCH $1"
}

# The page holds no cluster data and asks for a token; the data needs one.
[ "$(curl -s -o /dev/null -w '%{http_code}' "$API/ui/")" = 200 ] || fail "/ui/ is not served"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$API/ui/api/placement")" = 401 ] ||
	fail "/ui/api/placement answers without a token"
browse --dump-dom "$API/ui/" > "$WORK/login.html" || fail "chromium (no token)"
grep -q '<form id="login">' "$WORK/login.html" || fail "the page does not ask for a token"

for f in "$PODKERNEL_SRC"/examples/stories/*.yaml; do
	podctl apply -f "$f" > /dev/null || fail "apply $f"
done
cat > "$WORK/gangs.yaml" <<'EOF'
apiVersion: v1
kind: Namespace
metadata: {name: tpu}
---
apiVersion: scheduling.k8s.io/v1alpha3
kind: PodGroup
metadata:
  name: slice-a
  namespace: tpu
  annotations: {scheduling.podkernel.dev/slice-shape: "4x4x4"}
spec:
  schedulingPolicy: {gang: {minCount: 16}}
  schedulingConstraints: {topology: [{key: topology.podkernel.dev/cube}]}
---
apiVersion: scheduling.k8s.io/v1alpha3
kind: PodGroup
metadata: {name: too-big, namespace: tpu}
spec:
  schedulingPolicy: {gang: {minCount: 2}}
EOF
for i in $(seq 0 15); do cat >> "$WORK/gangs.yaml" <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: slice-a-$i, namespace: tpu}
spec:
  schedulingGroup: {podGroupName: slice-a}
  containers: [{name: c, image: x, resources: {requests: {google.com/tpu: "4"}}}]
EOF
done
for i in 0 1; do cat >> "$WORK/gangs.yaml" <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: too-big-$i, namespace: tpu}
spec:
  schedulingGroup: {podGroupName: too-big}
  containers: [{name: c, image: x, resources: {requests: {google.com/tpu: "8"}}}]
EOF
done
podctl apply -f "$WORK/gangs.yaml" > /dev/null || fail "apply gangs"

# A cordoned host, and a real node whose agent stops reporting.
merge_patch /api/v1/nodes/tpu-ss1-h20 '{"spec":{"unschedulable":true}}'
e2e_agent edge-0 power8gpudistances.xml
wait_for 20 podctl get node edge-0 || fail "node edge-0 was not published"
merge_patch /api/v1/nodes/edge-0 \
	'{"metadata":{"labels":{"topology.podkernel.dev/superslice":"edge","topology.podkernel.dev/cube":"edge-r0"}}}'
kill -9 "$AGENT_PID_edge_0"
wait_for 20 sh -c "'$BIN/podctl' get node edge-0 | grep -q Unreachable" ||
	fail "edge-0 was not marked unreachable"

wait_for 20 has_bound 69 || fail "the stories and the slice were not bound"
wait_for 10 sh -c "'$BIN/podctl' describe pg -n tpu too-big | grep -q Unschedulable" ||
	fail "too-big has no Unschedulable condition"
sleep 1 # the map follows the change stream: let the last conditions land

# every page of the lists (one list answer holds at most 10,000 objects)
python3 "$PODKERNEL_SRC/tests/e2e/check_ui_map.py" list "$PODKERNEL_SERVER/api/v1/nodes" "$WORK/nodes.json" ||
	fail "list nodes"
python3 "$PODKERNEL_SRC/tests/e2e/check_ui_map.py" list "$PODKERNEL_SERVER/api/v1/pods" "$WORK/pods.json" ||
	fail "list pods"
api "$API/ui/api/placement" > "$WORK/placement.json" || fail "GET /ui/api/placement"
python3 "$CHECK" json "$WORK" "$WORK/placement.json" || fail "/ui/api/placement differs from the objects"
python3 - "$WORK/placement.json" <<'EOF' || fail "placement document"
import json, sys
d = json.load(open(sys.argv[1]))
g = {x["name"]: x for x in d["groups"]}
pending = [d["groups"][i]["name"] for i in d["pending"]]
assert pending == ["too-big"], pending
assert g["too-big"]["reason"] == "Unschedulable", g["too-big"]
assert g["slice-a"]["sliceShape"] == "4x4x4" and g["slice-a"]["hosts"] == 16, g["slice-a"]
assert d["summary"]["cordoned"] == 1 and d["summary"]["unreachable"] == 1, d["summary"]
assert d["summary"]["hosts"] == 513, d["summary"]
EOF

# The page, with the token from the address (it moves to sessionStorage).
URL="$API/ui/#token=$ADMIN_TOKEN&node=tpu-ss0-h0"
browse --dump-dom "$URL" > "$WORK/map.html" || fail "chromium --dump-dom"
python3 "$CHECK" dom "$WORK" "$WORK/map.html" || fail "the page shows other counts than the objects"
grep -q 'data-node="tpu-ss0-h0"' "$WORK/map.html" || fail "#node= did not open the host"
pods_h0=$(python3 -c "import json,sys; print(sum(1 for p in json.load(open(sys.argv[1]))['items'] if p['spec'].get('nodeName')=='tpu-ss0-h0'))" "$WORK/pods.json")
grep -q "data-pods=\"$pods_h0\"" "$WORK/map.html" || fail "host detail does not list its $pods_h0 pods"
grep -q 'data-group="tpu/too-big"' "$WORK/map.html" || fail "the pending gang is not listed"
grep -q '<span data-k="accelerators allocated"><b>[0-9]* of [0-9]* ([0-9]*%)</b>' "$WORK/map.html" ||
	fail "the headline is not the accelerators allocated"
# What a person reads, not only the attributes: no value printed as "null",
# "undefined" or "NaN" anywhere (an untainted host's panel once read "nullnull").
python3 - "$WORK/map.html" <<'EOF' || fail "the page shows a missing value as text"
import html.parser, re, sys
class Text(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.skip, self.bad = 0, []
    def handle_starttag(self, tag, attrs):
        self.skip += tag in ("script", "style")
    def handle_endtag(self, tag):
        self.skip -= tag in ("script", "style")
    def handle_data(self, data):
        if not self.skip and re.search(r"null|undefined|NaN", data):
            self.bad.append(data.strip())
t = Text()
t.feed(open(sys.argv[1]).read())
assert not t.bad, t.bad[:5]
EOF
rm -rf "$WORK/chromium"
browse --screenshot="$WORK/ui-map.png" "$API/ui/#token=$ADMIN_TOKEN&node=tpu-ss0-h0" > /dev/null ||
	fail "chromium --screenshot"
[ -s "$WORK/ui-map.png" ] || fail "no screenshot"
mkdir -p "$PODKERNEL_BUILD"
cp "$WORK/ui-map.png" "$PODKERNEL_BUILD/ui-map.png"
echo "screenshot: $PODKERNEL_BUILD/ui-map.png"

# The terminal map prints the same occupancy.
podctl map --color never --width 1 > "$WORK/map.txt" || fail "podctl map"
api "$API/ui/api/placement" > "$WORK/placement2.json" || fail "GET /ui/api/placement"
python3 "$CHECK" map "$WORK/placement2.json" "$WORK/map.txt" || fail "podctl map differs"
grep -q 'too-big (0/2 pods bound): Unschedulable' "$WORK/map.txt" || fail "podctl map: no pending gang"
python3 - "$WORK/placement2.json" "$WORK/map.txt" <<'EOF' || fail "podctl map: accelerators allocated"
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
line = "cluster: %d of %d accelerators allocated" % (s["acceleratorsAllocated"], s["accelerators"])
assert s["accelerators"] >= 2048 and s["acceleratorsAllocated"] > 0, s
assert line in open(sys.argv[2]).read(), line
EOF
grep -q 'Unschedulable: Unschedulable' "$WORK/map.txt" && fail "podctl map repeats the reason"
# Under a real mouse (DevTools protocol): the tooltip and the host panel; then
# the page follows a change of the cluster without a reload.
python3 "$PODKERNEL_SRC/tests/e2e/ui_interact.py" "$API/ui/#token=$ADMIN_TOKEN" ss0 tpu-ss0-h0 \
	curl -sS -o /dev/null -X PATCH -H "Authorization: Bearer $ADMIN_TOKEN" \
	-H 'Content-Type: application/merge-patch+json' -d '{"spec":{"unschedulable":true}}' \
	"$API/api/v1/nodes/tpu-ss1-h21" || fail "hover, click or live update"
echo "placement map: page, JSON and terminal agree"
