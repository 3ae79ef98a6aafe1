# Shared helpers for the podkerneld scripts (sourced, not run).
# pk_start DATADIR [ARGS...]: start podkerneld on a free loopback port; sets
# PK_PID, PK_PORT, PK_LOG.  pk_stop: SIGTERM and wait; fails if the server
# exits non-zero (sanitizer reports included).  Every server is killed by the
# EXIT trap.
set -u
WORK=$(mktemp -d /tmp/pk-server-test.XXXXXX)
PK_PIDS=""
pk_cleanup() {
	for p in $PK_PIDS; do kill -9 "$p" 2>/dev/null; done
	rm -rf "$WORK"
}
trap pk_cleanup EXIT INT TERM

fail() { echo "FAIL: $*" >&2; [ -n "${PK_LOG:-}" ] && tail -20 "$PK_LOG" >&2; exit 1; }
. "$PODKERNEL_SRC/tests/need.sh"
need() { need_tool "$@"; }

PK_N=0
pk_start() {
	dir=$1; shift
	PK_N=$((PK_N + 1))
	PK_LOG="$WORK/server.$PK_N.log"
	: >"$PK_LOG"
	"$PODKERNEL_BIN/podkerneld" --listen 127.0.0.1:0 --data-dir "$dir" "$@" 2>"$PK_LOG" &
	PK_PID=$!
	PK_PIDS="$PK_PIDS $PK_PID"
	i=0
	PK_PORT=""
	while [ $i -lt 100 ]; do
		PK_PORT=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$PK_LOG" | head -1)
		[ -n "$PK_PORT" ] && return 0
		kill -0 "$PK_PID" 2>/dev/null || fail "podkerneld exited at start"
		sleep 0.1
		i=$((i + 1))
	done
	fail "podkerneld did not start"
}

# pk_kubeconfig FILE: wait for the kubeconfig pk_start's --write-kubeconfig
# names (written once the loop runs, after the port is said) and use it.
pk_kubeconfig() {
	i=0
	until [ -s "$1" ]; do
		[ $i -lt 100 ] || fail "no kubeconfig written"
		sleep 0.1
		i=$((i + 1))
	done
	export KUBECONFIG="$1"
}

# pk_kubeconfig_open FILE: a kubeconfig for pk_start's server with no
# credentials (the default namespace) written to FILE, and used.
pk_kubeconfig_open() {
	cat >"$1" <<K
apiVersion: v1
kind: Config
clusters: [{name: pk, cluster: {server: "http://127.0.0.1:$PK_PORT"}}]
users: [{name: u, user: {}}]
contexts: [{name: pk, context: {cluster: pk, user: u, namespace: default}}]
current-context: pk
K
	export KUBECONFIG="$1"
}

pk_stop() {
	kill -TERM "$PK_PID"
	wait "$PK_PID" || fail "podkerneld exited with $? after SIGTERM"
}

# code METHOD PATH [curl args...]: prints the HTTP status; the body goes to $WORK/body.
code() {
	m=$1; p=$2; shift 2
	curl -s -o "$WORK/body" -w '%{http_code}' -X "$m" "$PK_URL$p" "$@"
}
expect() {
	want=$1; shift
	got=$(code "$@")
	[ "$got" = "$want" ] || fail "$* -> $got, want $want: $(head -c 400 "$WORK/body")"
}
rv_of() { grep -o '"resourceVersion":"[0-9]*"' "$1" | head -1 | tr -dc 0-9; }
