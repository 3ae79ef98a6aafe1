#!/bin/sh
# `podctl board verify` against link reports: a correct two-host report of the
# tpu-cube board, the same with a missing link, a wrong peer, a down port and
# an unknown port, bad input (exit 2), and end to end: podagent inside a
# network namespace whose veth ports are named and aliased as host 0's ICI
# ports (one of them down) writes the Node that verify reads.
set -u
: "${PODKERNEL_BIN:?}" "${PODKERNEL_SRC:?}"
PODCTL=$PODKERNEL_BIN/podctl
AGENT=$PODKERNEL_BIN/podagent
BOARD=$PODKERNEL_SRC/boards/tpu-cube.yaml
GOOD=$PODKERNEL_SRC/tests/agent/fixtures/tpu-cube-links.yaml
XML=$PODKERNEL_SRC/tests/fixtures/hwloc/power8gpudistances.xml
. "$PODKERNEL_SRC/tests/need.sh"
need_file "$XML"
need_tool python3 ip
tmp=$(mktemp -d) || exit 1
ns=
cleanup() { [ -n "$ns" ] && ip netns del "$ns" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
fail=0

"$PODCTL" board verify "$BOARD" --links "$GOOD" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 0 ] || { echo "good report: exit $rc"; cat "$tmp/out" "$tmp/err"; fail=1; }
grep -q "^2 hosts, 32 ports: 32 ok, 0 missing" "$tmp/out" || { echo "good report:"; cat "$tmp/out"; fail=1; }

# every kind of mismatch, one each
python3 - "$GOOD" "$tmp/bad.json" <<'PY'
import json, sys, re
# the fixture is flow-style YAML simple enough to read line by line
items, cur = [], None
for line in open(sys.argv[1]):
    m = re.match(r"  host: (\S+)", line)
    if m:
        cur = {"apiVersion": "podkernel.dev/v1alpha1", "kind": "LinkReport", "host": m.group(1), "links": []}
        items.append(cur)
    m = re.match(r"  - \{port: (\S+), operstate: (\S+), carrier: (\S+), peer: (\S+)\}", line)
    if m:
        cur["links"].append({"port": m.group(1), "operstate": m.group(2),
                             "carrier": m.group(3) == "true", "peer": m.group(4)})
h0, h1 = items[0]["links"], items[1]["links"]
del h0[0]                                   # ici0xm missing
h0[0]["peer"] = "tpu-cube0-h7/ici0ym"       # ici0ym wrong peer
h1[2]["operstate"] = "down"; h1[2]["carrier"] = False   # h1 ici0zm down
h1.append({"port": "eth7", "operstate": "up", "carrier": True, "peer": ""})
json.dump({"apiVersion": "v1", "kind": "List", "items": items}, open(sys.argv[2], "w"))
PY
"$PODCTL" board verify "$BOARD" --links "$tmp/bad.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 1 ] || { echo "bad wiring: exit $rc, expected 1"; cat "$tmp/err"; fail=1; }
for want in "missing link: tpu-cube0-h0/ici0xm (expected peer tpu-cube0-h1/ici1xp)" \
	"wrong peer: tpu-cube0-h0/ici0ym -> tpu-cube0-h7/ici0ym, expected tpu-cube0-h2/ici2yp" \
	"down: tpu-cube0-h1/ici0zm (operstate down, carrier no)" \
	"unknown port: tpu-cube0-h1/eth7" \
	"2 hosts, 32 ports: 29 ok, 1 missing, 1 wrong peer, 1 down, 0 unexpected, 1 unknown"; do
	grep -qF "$want" "$tmp/out" || { echo "bad wiring: no line: $want"; cat "$tmp/out"; fail=1; }
done

# bad input: exit 2 with the file and field
"$PODCTL" board verify "$BOARD" --links "$tmp/nope.json" 2>"$tmp/err"
[ $? = 2 ] || { echo "missing report: expected exit 2"; fail=1; }
printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}\n' >"$tmp/pod.json"
"$PODCTL" board verify "$BOARD" --links "$tmp/pod.json" 2>"$tmp/err"
[ $? = 2 ] && grep -q "pod.json: items\[0\].kind" "$tmp/err" ||
	{ echo "pod as report: expected exit 2 naming items[0].kind"; cat "$tmp/err"; fail=1; }
printf '{"kind":"LinkReport","host":"elsewhere","links":[]}\n' >"$tmp/stranger.json"
"$PODCTL" board verify "$BOARD" --links "$tmp/stranger.json" 2>"$tmp/err"
[ $? = 2 ] && grep -q "elsewhere is not a host" "$tmp/err" ||
	{ echo "unknown host: expected exit 2"; cat "$tmp/err"; fail=1; }
"$PODCTL" board verify "$BOARD" 2>/dev/null
[ $? = 2 ] || { echo "no --links: expected exit 2"; fail=1; }

# end to end through podagent and netlink
ns=pkagent-verify-$$
if ! ip netns add "$ns" 2>/dev/null; then
	ns=
else
	i=0
	grep -A17 "host: tpu-cube0-h0$" "$GOOD" | sed -n 's/.*port: \([^,]*\),.*peer: \([^}]*\)}/\1 \2/p' |
	while read -r port peer; do
		ip netns exec "$ns" ip link add "$port" type veth peer name "far$i" &&
		ip netns exec "$ns" ip link set "$port" alias "peer=$peer" &&
		ip netns exec "$ns" ip link set "$port" up &&
		{ [ "$port" = ici2zp ] || ip netns exec "$ns" ip link set "far$i" up; } || exit 1
		i=$((i + 1))
	done || { echo "cannot build the veth ports"; fail=1; }
	ip netns exec "$ns" "$AGENT" --once --no-udev --hwloc-xml "$XML" --board "$BOARD" \
		--node-name tpu-cube0-h0 -o yaml >"$tmp/node.yaml" 2>"$tmp/agent.err" ||
		{ echo "podagent failed"; cat "$tmp/agent.err"; fail=1; }
	"$PODCTL" board verify "$BOARD" --links "$tmp/node.yaml" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc = 1 ] || { echo "end to end: exit $rc, expected 1"; cat "$tmp/out" "$tmp/err"; fail=1; }
	grep -q "^down: tpu-cube0-h0/ici2zp (operstate lowerlayerdown, carrier no)" "$tmp/out" &&
	grep -q "^1 hosts, 16 ports: 15 ok, 0 missing, 0 wrong peer, 1 down" "$tmp/out" ||
		{ echo "end to end:"; cat "$tmp/out"; fail=1; }
fi
[ $fail = 0 ] || exit 1
[ -n "$ns" ] || skip "no network namespaces (needs root/CAP_NET_ADMIN): the rest passed, the end-to-end part did not run"
echo "test_board_verify: all passed"
