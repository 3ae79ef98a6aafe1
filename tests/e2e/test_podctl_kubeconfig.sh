#!/bin/sh
# podctl reads kubeconfig like kubectl, over TLS: the README's openssl recipe
# (a CA, a serving certificate signed by it, a token file), podkerneld
# --write-kubeconfig used by podctl and by the real kubectl, kubeconfigs made
# with `kubectl config`, $KUBECONFIG lists, --context, tokenFile,
# tls-server-name and proxy-url (through a CONNECT proxy), the overrides
# (--server, --token, --certificate-authority, --insecure-skip-tls-verify)
# and the errors that name what is wrong.
set -eu
. "$PODKERNEL_SRC/tests/e2e/lib.sh"
need_tool openssl kubectl python3
e2e_setup
unset PODKERNEL_SERVER PODKERNEL_TOKEN PODKERNEL_CA_FILE KUBECONFIG
export HOME="$WORK/home"
mkdir -p "$HOME"

expect_rc() {
	want=$1
	shift
	set +e
	"$@" > "$WORK/out" 2> "$WORK/err"
	rc=$?
	set -e
	[ "$rc" -eq "$want" ] || { cat "$WORK/out" "$WORK/err" >&2; fail "'$*' exited $rc, expected $want"; }
}

# --- the recipe of docs/install.md, "TLS, tokens and kubeconfig"
cd "$WORK"
openssl req -x509 -newkey rsa:2048 -nodes -days 365 -subj /CN=podkernel-ca \
	-keyout ca.key -out ca.crt > /dev/null 2>&1
openssl req -newkey rsa:2048 -nodes -subj /CN=podkerneld \
	-keyout server.key -out server.csr > /dev/null 2>&1
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' > server.ext
openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 365 \
	-extfile server.ext -out server.crt > /dev/null 2>&1
cat server.crt ca.crt > server-chain.crt
echo "$(openssl rand -hex 32),admin,admin-uid,\"system:masters\"" > tokens.csv
cd - > /dev/null
E2E_TLS_ARGS="--tls-cert-file $WORK/server-chain.crt --tls-private-key-file $WORK/server.key"
E2E_SCHEME=https
e2e_start_server --write-kubeconfig "$WORK/admin.kubeconfig"
grep -q "wrote kubeconfig $WORK/admin.kubeconfig (server https://127.0.0.1:$PORT)" \
	"$WORK/podkerneld.log" || fail "no kubeconfig written"
[ "$(stat -c %a "$WORK/admin.kubeconfig")" = 600 ] || fail "kubeconfig readable by others"
ADMIN=$(cut -d, -f1 "$WORK/tokens.csv")

# podctl and kubectl both use the written kubeconfig
expect_rc 0 "$BIN/podctl" --kubeconfig "$WORK/admin.kubeconfig" apply -f - <<'EOF'
apiVersion: v1
kind: Node
metadata: {name: kc-node}
status: {allocatable: {cpu: "4"}}
EOF
grep -q '^node/kc-node created$' "$WORK/out" || fail "apply through the kubeconfig"
timeout 30 kubectl --kubeconfig "$WORK/admin.kubeconfig" get node kc-node > /dev/null 2>&1 ||
	fail "kubectl rejects the written kubeconfig"
expect_rc 0 env KUBECONFIG="$WORK/missing.yaml:$WORK/admin.kubeconfig" "$BIN/podctl" get nodes
grep -q kc-node "$WORK/out" || fail "\$KUBECONFIG list not followed"
cp "$WORK/admin.kubeconfig" "$HOME/.kube-config"
mkdir -p "$HOME/.kube" && mv "$HOME/.kube-config" "$HOME/.kube/config"
expect_rc 0 "$BIN/podctl" get node kc-node
rm "$HOME/.kube/config"

# A kubeconfig made with kubectl config: CA file, token file (relative), two contexts
KC="$WORK/kc/multi.kubeconfig"
mkdir -p "$WORK/kc"
echo "$ADMIN" > "$WORK/kc/admin.token"
cp "$WORK/ca.crt" "$WORK/kc/ca.crt"
k() { kubectl config --kubeconfig "$KC" "$@" > /dev/null; }
k set-cluster pk --server "https://127.0.0.1:$PORT" --certificate-authority "$WORK/kc/ca.crt"
k set-cluster bad --server "https://127.0.0.1:$PORT"
k set-credentials admin --token wrong-token
k set-context good --cluster pk --user admin --namespace kc-ns
k set-context nocafile --cluster bad --user admin
k use-context good
# relative paths resolve against the kubeconfig's folder, as in kubectl
sed -i "s|certificate-authority: .*|certificate-authority: ca.crt|" "$KC"
sed -i "s|token: wrong-token|tokenFile: admin.token|" "$KC"
expect_rc 0 "$BIN/podctl" --kubeconfig "$KC" get nodes
expect_rc 0 "$BIN/podctl" --kubeconfig "$KC" apply -f - <<'EOF'
apiVersion: v1
kind: Namespace
metadata: {name: kc-ns}
---
apiVersion: v1
kind: Pod
metadata: {name: in-context-ns}
spec: {containers: [{name: c, image: x}]}
EOF
expect_rc 0 "$BIN/podctl" --kubeconfig "$KC" get pods -n kc-ns in-context-ns
expect_rc 1 "$BIN/podctl" --kubeconfig "$KC" get pods -n default in-context-ns
# the server's certificate is not trusted without a CA ...
expect_rc 1 "$BIN/podctl" --kubeconfig "$KC" --context nocafile get nodes
grep -qi "certificate" "$WORK/err" || fail "TLS failure not reported: $(cat "$WORK/err")"
# ... and said to be TLS, not an unreachable server
grep -q "TLS with the server failed" "$WORK/err" || fail "a CA mismatch is not named as TLS: $(cat "$WORK/err")"
grep -q "cannot reach the server" "$WORK/err" && fail "a CA mismatch reads as an unreachable server"
# ... unless given on the command line, or verification is skipped
expect_rc 0 "$BIN/podctl" --kubeconfig "$KC" --context nocafile --certificate-authority "$WORK/ca.crt" get nodes
expect_rc 0 "$BIN/podctl" --kubeconfig "$KC" --context nocafile --insecure-skip-tls-verify get nodes
# $PODKERNEL_CA_FILE stands in where nothing else names a CA, and never clashes with the flag
expect_rc 0 env PODKERNEL_CA_FILE="$WORK/ca.crt" "$BIN/podctl" --kubeconfig "$KC" --context nocafile get nodes
expect_rc 0 env PODKERNEL_CA_FILE="$WORK/ca.crt" "$BIN/podctl" --kubeconfig "$KC" --context nocafile \
	--insecure-skip-tls-verify get nodes
expect_rc 0 "$BIN/podctl" --kubeconfig "$KC" --insecure-skip-tls-verify get nodes
expect_rc 2 "$BIN/podctl" --kubeconfig "$KC" --insecure-skip-tls-verify --certificate-authority "$WORK/ca.crt" get nodes
grep -q "insecure flag is not allowed" "$WORK/err" || fail "CA with insecure accepted"
# --token and --server override the kubeconfig
expect_rc 1 "$BIN/podctl" --kubeconfig "$KC" --token wrong get nodes
grep -q "HTTP 401" "$WORK/err" || fail "--token did not override: $(cat "$WORK/err")"
expect_rc 1 "$BIN/podctl" --kubeconfig "$KC" --server https://127.0.0.1:1 get nodes
grep -q "cannot reach the server" "$WORK/err" || fail "--server did not override"
# tls-server-name: the handshake asks for and verifies that name while the
# connection still goes to the server's address (a name that does not
# resolve shows both); --server drops the kubeconfig's name, as in kubectl
# ($PODKERNEL_SERVER is --server: left out here)
kcp() { env -u PODKERNEL_SERVER "$BIN/podctl" --kubeconfig "$KC" "$@"; }
k set-cluster named --server "https://127.0.0.1:$PORT" --certificate-authority "$WORK/ca.crt" \
	--tls-server-name localhost
k set-cluster misnamed --server "https://127.0.0.1:$PORT" --certificate-authority "$WORK/ca.crt" \
	--tls-server-name podkerneld.invalid
k set-context named --cluster named --user admin
k set-context misnamed --cluster misnamed --user admin
expect_rc 0 kcp --context named get nodes
expect_rc 1 kcp --context misnamed get nodes
grep -q "TLS with the server failed" "$WORK/err" || fail "tls-server-name not verified: $(cat "$WORK/err")"
expect_rc 0 kcp --context misnamed --server "https://127.0.0.1:$PORT" get nodes
# kubectl agrees on all three
timeout 30 kubectl --kubeconfig "$KC" --context named get nodes > /dev/null 2>&1 ||
	fail "kubectl refuses the tls-server-name podctl accepts"
timeout 30 kubectl --kubeconfig "$KC" --context misnamed get nodes > /dev/null 2>&1 &&
	fail "kubectl accepts the tls-server-name podctl refuses"
timeout 30 kubectl --kubeconfig "$KC" --context misnamed --server "https://127.0.0.1:$PORT" \
	get nodes > /dev/null 2>&1 || fail "kubectl keeps tls-server-name after --server"
# ... and a server whose certificate names only that name: the handshake
# verifies it, the request keeps the server's Host and path prefix
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=api.internal \
	-addext subjectAltName=DNS:api.internal -keyout "$WORK/named.key" -out "$WORK/named.crt" \
	> /dev/null 2>&1 || fail "openssl: named certificate"
python3 -c '
import http.server, os, ssl, sys
w = sys.argv[1]
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        open(w + "/named.log", "a").write("%s %s\n" % (self.headers.get("Host"), self.path))
        b = b"{\"kind\":\"NodeList\",\"apiVersion\":\"v1\",\"metadata\":{},\"items\":[]}"
        self.send_response(200); self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(b))); self.end_headers(); self.wfile.write(b)
    def log_message(self, *a): pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
c = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); c.load_cert_chain(w + "/named.crt", w + "/named.key")
s.socket = c.wrap_socket(s.socket, server_side=True)
open(w + "/named.port.tmp", "w").write(str(s.server_port)); os.rename(w + "/named.port.tmp", w + "/named.port")
s.serve_forever()' "$WORK" &
E2E_PIDS="$E2E_PIDS $!"
wait_for 10 test -s "$WORK/named.port" || fail "the named TLS server did not start"
NPORT=$(cat "$WORK/named.port")
k set-cluster onlyname --server "https://127.0.0.1:$NPORT/prefix" --certificate-authority "$WORK/named.crt" \
	--tls-server-name api.internal
k set-context onlyname --cluster onlyname --user admin
expect_rc 0 kcp --context onlyname get nodes -o json
grep -qx "127.0.0.1:$NPORT /prefix/api/v1/nodes" "$WORK/named.log" ||
	fail "Host or path through tls-server-name: $(cat "$WORK/named.log")"
# proxy-url: the requests go through the proxy (a CONNECT tunnel), an
# unreachable proxy is an unreachable server, a scheme kubectl refuses is bad input
python3 "$PODKERNEL_SRC/tests/e2e/connect_proxy.py" --port-file "$WORK/proxy.port" \
	--log "$WORK/proxy.log" &
E2E_PIDS="$E2E_PIDS $!"
wait_for 10 test -s "$WORK/proxy.port" || fail "the proxy did not start"
k set-cluster proxied --server "https://127.0.0.1:$PORT" --certificate-authority "$WORK/ca.crt" \
	--proxy-url "http://127.0.0.1:$(cat "$WORK/proxy.port")"
k set-cluster deadproxy --server "https://127.0.0.1:$PORT" --certificate-authority "$WORK/ca.crt" \
	--proxy-url http://127.0.0.1:1
k set-context proxied --cluster proxied --user admin
k set-context deadproxy --cluster deadproxy --user admin
expect_rc 0 kcp --context proxied get nodes
grep -q "^CONNECT 127.0.0.1:$PORT " "$WORK/proxy.log" || fail "podctl did not go through the proxy"
expect_rc 1 kcp --context deadproxy get nodes
grep -q "cannot reach the server" "$WORK/err" || fail "unreachable proxy: $(cat "$WORK/err")"
sed "s|proxy-url: http://127.0.0.1:1|proxy-url: ftp://127.0.0.1:1|" "$KC" > "$WORK/ftp.kubeconfig"
expect_rc 2 env -u PODKERNEL_SERVER "$BIN/podctl" --kubeconfig "$WORK/ftp.kubeconfig" \
	--context deadproxy get nodes
grep -q 'proxy-url "ftp://127.0.0.1:1": expected an http://, https:// or socks5:// URL' "$WORK/err" ||
	fail "bad proxy scheme: $(cat "$WORK/err")"
# errors name the context, the file and the field
expect_rc 2 "$BIN/podctl" --kubeconfig "$KC" --context nope get nodes
grep -q 'context "nope" not found' "$WORK/err" || fail "missing context: $(cat "$WORK/err")"
expect_rc 2 "$BIN/podctl" --kubeconfig "$WORK/none.yaml" get nodes
printf 'users:\n- name: u\n  user: {token: [x]}\n' > "$WORK/bad.kubeconfig"
expect_rc 2 "$BIN/podctl" --kubeconfig "$WORK/bad.kubeconfig" get nodes
grep -q "bad.kubeconfig: users\[0\].user.token: must be a string" "$WORK/err" ||
	fail "bad field not named: $(cat "$WORK/err")"
# impersonation is refused by name, not dropped (podctl would act as the token's own user)
printf 'clusters: [{name: c, cluster: {server: "https://127.0.0.1:%s"}}]\nusers: [{name: impersonating, user: {token: x, as: bob}}]\ncontexts: [{name: i, context: {cluster: c, user: impersonating}}]\ncurrent-context: i\n' \
	"$PORT" > "$WORK/as.kubeconfig"
expect_rc 2 env -u PODKERNEL_SERVER "$BIN/podctl" --kubeconfig "$WORK/as.kubeconfig" get nodes
grep -q 'user "impersonating": impersonation (as) is not supported' "$WORK/err" ||
	fail "impersonation not refused: $(cat "$WORK/err")"
# offline commands never read the kubeconfig
expect_rc 0 "$BIN/podctl" --kubeconfig "$WORK/bad.kubeconfig" validate -f "$PODKERNEL_SRC/tests/scenarios/validate/list.json"
echo ok
