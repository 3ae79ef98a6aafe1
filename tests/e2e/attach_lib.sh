# Shared pieces of the attach-mode scripts (sourced after lib.sh, not run).
#
# The "cluster" is a standalone podkerneld --no-scheduling with TLS and a
# token file: it serves everything attach mode uses (list/watch, pods/binding,
# status subresources, Leases, events.k8s.io Events) and schedules nothing.
# The attached podkerneld instances reach it through a kubeconfig (server,
# CA file, token; or with ATTACH_AUTH=cert a CA and a client certificate
# embedded as -data) as they would reach a kube-apiserver.
#
#   attach_cluster_start [args]   start (or restart on the same port) the cluster
#   attach_start NAME [args]      an attached podkerneld; sets ATTACH_PID_NAME, ATTACH_PORT_NAME
#   attach_register_board [N]     the Nodes of boards/tpu-superslice.yaml (N superslices)
#   bound_to POD [NS]             the node a pod is bound to ("" when pending)

ATTACH_TOKEN=e2e-scheduler-token
CLUSTER_PORT=""

# attach_certs: a CA, the cluster's serving certificate and the scheduler's
# client certificate (O=system:masters); cert.pem is the CA, so whatever
# trusts the cluster's certificate keeps working.
attach_certs() {
	command -v openssl > /dev/null 2>&1 || { echo "openssl not available" >&2; exit 77; }
	(
		cd "$WORK" || exit 1
		ssl() { openssl "$@" > /dev/null 2>&1 || exit 1; }
		ssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=attach-ca -keyout ca.key -out cert.pem
		ssl req -newkey rsa:2048 -nodes -subj /CN=cluster -keyout key.pem -out server.csr
		printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' > server.ext
		ssl x509 -req -in server.csr -CA cert.pem -CAkey ca.key -CAcreateserial -days 1 \
			-extfile server.ext -out server.pem
		ssl req -newkey rsa:2048 -nodes -subj "/O=system:masters/CN=system:kube-scheduler" \
			-keyout sched.key -out sched.csr
		ssl x509 -req -in sched.csr -CA cert.pem -CAkey ca.key -CAcreateserial -days 1 -out sched.crt
	) || fail "openssl could not make the certificates"
	E2E_TLS_ARGS="--tls-cert-file $WORK/server.pem --tls-private-key-file $WORK/key.pem --client-ca-file $WORK/cert.pem"
	E2E_SCHEME=https
	export PODKERNEL_CA_FILE="$WORK/cert.pem"
}

# The scheduler's kubeconfig: a token and a CA file, or with ATTACH_AUTH=cert
# everything embedded as -data (CA, client certificate and key).
attach_kubeconfig() {
	if [ "${ATTACH_AUTH:-token}" = cert ]; then
		b64() { base64 -w0 < "$1"; }
		cluster="{server: \"$PODKERNEL_SERVER\", certificate-authority-data: $(b64 "$WORK/cert.pem")}"
		user="{client-certificate-data: $(b64 "$WORK/sched.crt"), client-key-data: $(b64 "$WORK/sched.key")}"
	else
		cluster="{server: \"$PODKERNEL_SERVER\", certificate-authority: \"$WORK/cert.pem\"}"
		user="{token: $ATTACH_TOKEN}"
	fi
	cat > "$WORK/attach.kubeconfig" <<K
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: $cluster}]
users: [{name: sched, user: $user}]
contexts: [{name: c, context: {cluster: c, user: sched}}]
current-context: c
K
}

attach_cluster_start() {
	if [ -z "$CLUSTER_PORT" ]; then
		if [ "${ATTACH_AUTH:-token}" = cert ]; then attach_certs; else e2e_tls; fi
		echo "$ATTACH_TOKEN,system:kube-scheduler,sched,\"system:masters\"" >> "$WORK/tokens.csv"
		listen=127.0.0.1:0
	else
		listen=127.0.0.1:$CLUSTER_PORT
	fi
	[ -f "$WORK/cluster.log" ] && cat "$WORK/cluster.log" >> "$WORK/cluster.old.log"
	: > "$WORK/cluster.log"
	# shellcheck disable=SC2086 # E2E_TLS_ARGS holds two options
	"$BIN/podkerneld" --no-scheduling --listen "$listen" --data-dir "$WORK/cluster" \
		--token-auth-file "$WORK/tokens.csv" $E2E_TLS_ARGS "$@" >> "$WORK/cluster.log" 2>&1 &
	CLUSTER_PID=$!
	E2E_PIDS="$E2E_PIDS $CLUSTER_PID"
	for _ in $(seq 1 150); do
		p=$(sed -n 's/.*serving on .*(port \([0-9]*\)).*/\1/p' "$WORK/cluster.log" | tail -n 1)
		[ -n "$p" ] && break
		kill -0 "$CLUSTER_PID" 2>/dev/null || { cat "$WORK/cluster.log" >&2; fail "cluster exited"; }
		sleep 0.1
	done
	[ -n "$p" ] || fail "the cluster did not start"
	CLUSTER_PORT=$p
	export PODKERNEL_SERVER="https://127.0.0.1:$CLUSTER_PORT"
	attach_kubeconfig
}

attach_start() {
	name=$1
	shift
	log="$WORK/attach-$name.log"
	"$BIN/podkerneld" --kubeconfig "$WORK/attach.kubeconfig" --listen 127.0.0.1:0 -v 2 "$@" \
		>> "$log" 2>&1 &
	pid=$!
	E2E_PIDS="$E2E_PIDS $pid"
	port=""
	for _ in $(seq 1 150); do
		port=$(sed -n 's/.*serving health on .*(port \([0-9]*\)).*/\1/p' "$log" | tail -n 1)
		[ -n "$port" ] && break
		kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; fail "attached podkerneld $name exited"; }
		sleep 0.1
	done
	[ -n "$port" ] || { cat "$log" >&2; fail "attached podkerneld $name did not start"; }
	eval "ATTACH_PID_$name=$pid ATTACH_PORT_$name=$port"
}

attach_register_board() {
	podctl board nodes "$PODKERNEL_SRC/boards/tpu-superslice.yaml" --superslices "${1:-1}" \
		-o json > "$WORK/board-nodes.json" || fail "podctl board nodes"
	podctl apply -f "$WORK/board-nodes.json" > /dev/null || fail "registering the board's nodes"
}

bound_to() {
	podctl get pod "$1" -n "${2:-default}" -o json 2>/dev/null |
		python3 -c 'import json,sys; print(json.load(sys.stdin).get("spec",{}).get("nodeName",""))'
}

# attach_dump: the attached instances' logs, on failure
attach_dump() {
	for f in "$WORK"/attach-*.log "$WORK/cluster.log"; do
		[ -n "${ATTACH_KEEP_LOGS:-}" ] && cp "$f" "$ATTACH_KEEP_LOGS/"
		[ -f "$f" ] || continue
		echo "--- $(basename "$f") (tail)" >&2
		tail -n 30 "$f" >&2
	done
}
