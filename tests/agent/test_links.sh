#!/bin/sh
# ICI ports read through real netlink: a network namespace with veth pairs
# named like ICI ports, aliased "peer=<host>/<port>", one of them down, and a
# link that is not an ICI port.  podagent runs inside with `ip netns exec`:
# once (the link report), then as a daemon that must notice a link going up.
set -u
: "${PODKERNEL_BIN:?}" "${PODKERNEL_SRC:?}"
AGENT=$PODKERNEL_BIN/podagent
XML=$PODKERNEL_SRC/tests/fixtures/hwloc/24em64t-2n6c2t-pci.xml
. "$PODKERNEL_SRC/tests/need.sh"
need_file "$XML"
need_tool ip python3
ns=pkagent-links-$$
ip netns add $ns 2>/dev/null || skip "cannot create a network namespace (needs root/CAP_NET_ADMIN)"
tmp=$(mktemp -d) || exit 1
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null
	ip netns del $ns 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
in_ns() { ip netns exec $ns "$@"; }
fail=0

in_ns ip link add ici0 type veth peer name ici1 &&
in_ns ip link add ici2 type veth peer name ici3 &&
in_ns ip link add eth9 type veth peer name eth10 &&
in_ns ip link set ici0 alias "peer=tpu-h1/ici1" &&
in_ns ip link set ici1 alias "rack=r3 peer=tpu-h0/ici0" &&
in_ns ip link set ici2 alias "peer=tpu-h1/ici3" &&
in_ns ip link set ici0 up && in_ns ip link set ici1 up && in_ns ip link set ici2 up ||
	{ echo "FAIL: test_links: cannot set up veth pairs in a namespace" >&2; exit 1; }
# ici3 stays down: ici2 has no carrier

in_ns "$AGENT" --once --no-udev --hwloc-xml "$XML" --node-name tpu-h0 -o json \
	>"$tmp/once.json" 2>"$tmp/once.err" || { echo "once: failed"; cat "$tmp/once.err"; fail=1; }
python3 - "$tmp/once.json" <<'PY' || fail=1
import json, sys
node = json.load(open(sys.argv[1]))
rep = json.loads(node["metadata"]["annotations"]["ici.podkernel.dev/links"])
assert rep["kind"] == "LinkReport" and rep["host"] == "tpu-h0", rep
links = {l["port"]: l for l in rep["links"]}
assert sorted(links) == ["ici0", "ici1", "ici2", "ici3"], links   # eth9/eth10 are not ICI
assert links["ici0"]["operstate"] == "up" and links["ici0"]["carrier"] is True, links["ici0"]
assert links["ici0"]["peer"] == "tpu-h1/ici1", links["ici0"]
assert links["ici1"]["peer"] == "tpu-h0/ici0", links["ici1"]
assert links["ici2"]["carrier"] is False and links["ici2"]["operstate"] != "up", links["ici2"]
assert links["ici3"]["operstate"] == "down" and links["ici3"]["peer"] == "", links["ici3"]
print("link report: ok")
PY

# daemon: bringing ici3 up is a link change that triggers a new cycle
ip netns exec $ns "$AGENT" --no-udev --hwloc-xml "$XML" --node-name tpu-h0 --debounce-ms 200 \
	--interval 3600 --nfd-dir "$tmp" 2>"$tmp/daemon.err" &
pid=$!
i=0
while [ ! -f "$tmp/podagent" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -f "$tmp/podagent" ] || { echo "daemon: no first cycle"; fail=1; }
in_ns ip link set ici3 up
i=0
while ! grep -q "link change" "$tmp/daemon.err" && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
grep -q "link change" "$tmp/daemon.err" || { echo "daemon: link change not seen"; cat "$tmp/daemon.err"; fail=1; }
kill -TERM $pid
wait $pid
rc=$?
pid=
[ $rc = 0 ] || { echo "daemon: exit $rc after SIGTERM"; cat "$tmp/daemon.err"; fail=1; }
[ $fail = 0 ] && echo "test_links: all passed"
exit $fail
