#!/bin/sh
# podagent --health-listen: GET /healthz is 200 while the daemon's discovery
# cycles finish; when a cycle hangs (a publish to a server that accepts and
# never answers) it turns 503 after three intervals, naming the age; other
# paths are 404, a bad address is exit 2, and --once refuses the option.
set -eu
: "${PODKERNEL_BIN:?}" "${PODKERNEL_SRC:?}"
. "$PODKERNEL_SRC/tests/need.sh"
need_tool curl python3
WORK=$(mktemp -d "${TMPDIR:-/tmp}/podkernel-agent-health.XXXXXX")
PIDS=""
trap 'for p in $PIDS; do kill $p 2>/dev/null || true; done; rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$WORK/agent.log" ] && cat "$WORK/agent.log" >&2; exit 1; }
XML="$PODKERNEL_SRC/tests/fixtures/hwloc/24em64t-2n6c2t-pci.xml"
A="$PODKERNEL_BIN/podagent"

port_of() { # LOG: the health port the agent printed
	for _ in $(seq 1 100); do
		p=$(sed -n 's/.*serving health on .*(port \([0-9]*\)).*/\1/p' "$1" | tail -n 1)
		[ -n "$p" ] && { echo "$p"; return 0; }
		sleep 0.1
	done
	return 1
}

# A healthy daemon: discovery only (an NFD file), every second.
"$A" --hwloc-xml "$XML" --no-udev --no-netlink --node-name n1 --no-lease \
	--nfd-dir "$WORK/nfd" --interval 1 --health-listen 127.0.0.1:0 > "$WORK/agent.log" 2>&1 &
PIDS="$PIDS $!"
P=$(port_of "$WORK/agent.log") || fail "no health port"
[ "$(curl -s "http://127.0.0.1:$P/healthz")" = ok ] || fail "/healthz of a healthy agent"
sleep 4
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$P/healthz")" = 200 ] ||
	fail "/healthz after three intervals of finished cycles"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$P/nosuch")" = 404 ] || fail "404"

# A hung cycle: the server accepts and never answers.
python3 -c '
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0)); s.listen(16)
print(s.getsockname()[1], flush=True)
conns = []
while True:
    c, _ = s.accept(); conns.append(c)
' > "$WORK/hang.port" &
PIDS="$PIDS $!"
for _ in $(seq 1 50); do [ -s "$WORK/hang.port" ] && break; sleep 0.1; done
HP=$(cat "$WORK/hang.port")
"$A" --hwloc-xml "$XML" --no-udev --no-netlink --node-name n1 --no-lease --interval 1 \
	--publish "http://127.0.0.1:$HP" --retries 1 --health-listen 127.0.0.1:0 > "$WORK/agent2.log" 2>&1 &
PIDS="$PIDS $!"
P2=$(port_of "$WORK/agent2.log") || fail "no health port (hung agent)"
code=""
for _ in $(seq 1 80); do
	code=$(curl -s -o "$WORK/body" -w '%{http_code}' "http://127.0.0.1:$P2/healthz")
	[ "$code" = 503 ] && break
	sleep 0.1
done
[ "$code" = 503 ] || fail "a hung cycle did not turn /healthz to 503 (got $code)"
grep -q "no discovery cycle finished for [0-9]* s (limit 3 s)" "$WORK/body" || fail "503 body: $(cat "$WORK/body")"

# Usage errors.
rc=0
"$A" --hwloc-xml "$XML" --no-udev --no-netlink --node-name n1 --health-listen nonsense > /dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "--health-listen nonsense: exit $rc"
rc=0
"$A" --once --hwloc-xml "$XML" --no-udev --no-netlink --node-name n1 --health-listen 127.0.0.1:0 > /dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "--once with --health-listen: exit $rc"
echo "test_health: /healthz follows the discovery loop"
