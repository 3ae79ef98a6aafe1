# Shared pieces of the end-to-end scripts (sourced, not run).
#
# Every script gets PODKERNEL_BIN (the programs) and PODKERNEL_SRC (the tree).
# e2e_setup makes a temporary directory and a token file; e2e_start_server
# starts podkerneld on a free loopback port (port 0, read back from its log);
# everything started is recorded and killed by the EXIT trap.

: "${PODKERNEL_BIN:?set PODKERNEL_BIN to the directory of podkerneld, podctl and podagent}"
: "${PODKERNEL_SRC:?set PODKERNEL_SRC to the source tree}"
BIN=$PODKERNEL_BIN
. "$PODKERNEL_SRC/tests/need.sh"
FIXTURES="$PODKERNEL_SRC/tests/fixtures/hwloc"
E2E_PIDS=""
ADMIN_TOKEN=e2e-admin-token

e2e_cleanup() {
	for p in $E2E_PIDS; do kill -9 "$p" 2>/dev/null || true; done
	for p in $E2E_PIDS; do wait "$p" 2>/dev/null || true; done
	[ -n "${WORK:-}" ] && rm -rf "$WORK"
}

fail() {
	echo "FAIL: $*" >&2
	if [ -n "${WORK:-}" ] && [ -f "$WORK/podkerneld.log" ]; then
		echo "--- podkerneld log (tail)" >&2
		tail -n 40 "$WORK/podkerneld.log" >&2
	fi
	exit 1
}

e2e_setup() {
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/podkernel-e2e.XXXXXX")
	trap e2e_cleanup EXIT
	trap 'exit 1' INT TERM
	echo "$ADMIN_TOKEN,admin,1,\"system:masters\"" > "$WORK/tokens.csv"
	export PODKERNEL_TOKEN=$ADMIN_TOKEN
}

# e2e_node_token NAME: add a node identity (once), print its token
e2e_node_token() {
	grep -q "^e2e-node-$1," "$WORK/tokens.csv" ||
		echo "e2e-node-$1,system:node:$1,uid-$1,\"system:nodes\"" >> "$WORK/tokens.csv"
	echo "e2e-node-$1"
}

# e2e_tls: a self-signed certificate; the server then serves https (kubectl
# sends bearer tokens only over TLS) and podctl/podagent trust it.
E2E_TLS_ARGS=""
E2E_SCHEME=http
E2E_CA=""
e2e_tls() {
	need_tool openssl
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$WORK/key.pem" -out "$WORK/cert.pem" \
		-days 1 -subj /CN=localhost -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" \
		> /dev/null 2>&1 || fail "openssl cannot make a certificate"
	E2E_TLS_ARGS="--tls-cert-file $WORK/cert.pem --tls-private-key-file $WORK/key.pem"
	E2E_SCHEME=https
	E2E_CA="$WORK/cert.pem"
	export PODKERNEL_CA_FILE="$WORK/cert.pem"
}

# kc ARGS...: kubectl as admin, through a kubeconfig (after e2e_start_server)
kc() { timeout 30 kubectl --kubeconfig "$WORK/kubeconfig" --request-timeout=10s "$@"; }
e2e_kubeconfig() {
	cat > "$WORK/kubeconfig" <<K
apiVersion: v1
kind: Config
clusters: [{name: pk, cluster: {server: "$PODKERNEL_SERVER", certificate-authority: "$WORK/cert.pem"}}]
users: [{name: u, user: {token: $ADMIN_TOKEN}}]
contexts: [{name: pk, context: {cluster: pk, user: u, namespace: default}}]
current-context: pk
K
}

# e2e_start_server [podkerneld args...]: sets PORT and PODKERNEL_SERVER
e2e_start_server() {
	# a restart: keep the old log aside so the new port is read
	if [ -f "$WORK/podkerneld.log" ]; then
		cat "$WORK/podkerneld.log" >> "$WORK/podkerneld.old.log"
		: > "$WORK/podkerneld.log"
	fi
	# shellcheck disable=SC2086 # E2E_TLS_ARGS holds two options
	"$BIN/podkerneld" --listen 127.0.0.1:0 --data-dir "$WORK/data" \
		--token-auth-file "$WORK/tokens.csv" $E2E_TLS_ARGS "$@" >> "$WORK/podkerneld.log" 2>&1 &
	SERVER_PID=$!
	E2E_PIDS="$E2E_PIDS $SERVER_PID"
	PORT=""
	# E2E_START_SECONDS: how long the scheduling loop may take to start (default 20)
	for _ in $(seq 1 $((${E2E_START_SECONDS:-20} * 10))); do
		PORT=$(sed -n 's/.*serving on .*(port \([0-9]*\)).*/\1/p' "$WORK/podkerneld.log" | tail -n 1)
		# ready: the scheduling loop runs, or none was asked for
		if [ -n "$PORT" ] && grep -q -e "scheduling loop running" \
			-e "no-scheduling: serving the API and store only" "$WORK/podkerneld.log"; then
			break
		fi
		kill -0 "$SERVER_PID" 2>/dev/null || fail "podkerneld exited"
		sleep 0.1
	done
	[ -n "$PORT" ] || fail "podkerneld did not start"
	export PODKERNEL_SERVER="$E2E_SCHEME://127.0.0.1:$PORT"
}

# e2e_agent NAME FIXTURE.xml [ARGS...]: a podagent daemon registering node NAME
# (no kubelet here) and renewing its Lease every second
e2e_agent() {
	tok=$(e2e_node_token "$1")
	n=$1 fx=$2
	shift 2
	# shellcheck disable=SC2046
	"$BIN/podagent" --hwloc-xml "$FIXTURES/$fx" --node-name "$n" --publish "$PODKERNEL_SERVER" \
		--register-node --token "$tok" $([ "$E2E_SCHEME" = https ] && echo --ca-file "$E2E_CA") \
		--interval 1 --no-udev --no-netlink --retries 3 --backoff-ms 100 "$@" \
		>> "$WORK/agent-$n.log" 2>&1 &
	E2E_PIDS="$E2E_PIDS $!"
	eval "AGENT_PID_$(echo "$n" | tr -c 'a-zA-Z0-9\n' '_')=$!"
}

# wait_for SECONDS COMMAND...: retry COMMAND every 0.2 s until it succeeds
wait_for() {
	t=$1
	shift
	i=0
	while [ "$i" -lt $((t * 5)) ]; do
		if "$@" > /dev/null 2>&1; then return 0; fi
		sleep 0.2
		i=$((i + 1))
	done
	return 1
}

podctl() { "$BIN/podctl" "$@"; }

# bound_count [NS]: pods with spec.nodeName
bound_count() {
	if [ -n "${1:-}" ]; then set -- -n "$1"; else set -- -A; fi
	podctl get pods "$@" 2>/dev/null | grep -c ' Bound ' || true
}

has_bound() { [ "$(bound_count "${2:-}")" -ge "$1" ]; }

need_python() {
	need_tool python3
}

need_fixtures() {
	need_file "$FIXTURES"
}

# check_placement: gang, topology and capacity invariants of the whole cluster
# (pods and nodes as podctl -o json prints them), in python3.
check_placement() {
	podctl get nodes -o json > "$WORK/nodes.json" || fail "get nodes"
	podctl get pods -A -o json > "$WORK/pods.json" || fail "get pods"
	podctl get podgroups -A -o json > "$WORK/pgs.json" || fail "get podgroups"
	podctl get compositepodgroups -A -o json > "$WORK/cpgs.json" || fail "get cpgs"
	python3 "$PODKERNEL_SRC/tests/e2e/check_placement.py" "$WORK" || fail "placement invariants"
}
