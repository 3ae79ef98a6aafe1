#!/bin/sh
# Client-certificate authentication, as kube-apiserver's --client-ca-file: the
# certificate's CN is the user and each O a group.  A node uses its own
# identity (CN system:node:NAME, O system:nodes) under NodeRestriction:
# podagent registers and labels its Node and renews its Lease with it, but
# may not touch another node; an admin certificate (O system:masters) may do
# anything; a certificate from another CA is not an identity.  podctl reads
# the certificate from a kubeconfig (files and -data), and so does podagent
# --kubeconfig.
set -eu
. "$PODKERNEL_SRC/tests/e2e/lib.sh"
need_python
need_fixtures
need_tool openssl kubectl
e2e_setup
cd "$WORK"
ssl() { openssl "$@" > /dev/null 2>&1 || fail "openssl $*"; }
ssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=pk-ca -keyout ca.key -out ca.crt
ssl req -newkey rsa:2048 -nodes -subj /CN=podkerneld -keyout server.key -out server.csr
printf 'subjectAltName=IP:127.0.0.1\n' > server.ext
ssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile server.ext -out server.crt
cert() { # cert NAME SUBJECT [CA-PREFIX]
	ca=${3:-ca}
	ssl req -newkey rsa:2048 -nodes -subj "$2" -keyout "$1.key" -out "$1.csr"
	ssl x509 -req -in "$1.csr" -CA "$ca.crt" -CAkey "$ca.key" -CAcreateserial -days 2 -out "$1.crt"
}
cert node1 "/O=system:nodes/CN=system:node:cert-node-1"
cert admin "/O=system:masters/CN=alice"
ssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=other-ca -keyout other.key -out other.crt
cert rogue "/O=system:masters/CN=mallory" other
cd - > /dev/null
E2E_TLS_ARGS="--tls-cert-file $WORK/server.crt --tls-private-key-file $WORK/server.key --client-ca-file $WORK/ca.crt"
E2E_SCHEME=https
E2E_CA="$WORK/ca.crt"
e2e_start_server
unset PODKERNEL_TOKEN
export PODKERNEL_CA_FILE="$WORK/ca.crt"
as() { # as NAME podctl-args...: podctl with NAME's certificate
	n=$1
	shift
	"$BIN/podctl" --client-certificate "$WORK/$n.crt" --client-key "$WORK/$n.key" "$@"
}

# the node's own identity: register, label, Lease
"$BIN/podagent" --once --no-udev --no-netlink --hwloc-xml "$FIXTURES/power8gpudistances.xml" \
	--node-name cert-node-1 --publish "$PODKERNEL_SERVER" --ca-file "$WORK/ca.crt" \
	--client-certificate "$WORK/node1.crt" --client-key "$WORK/node1.key" --register-node \
	2> "$WORK/agent.err" || fail "podagent with its certificate: $(cat "$WORK/agent.err")"
as admin get node cert-node-1 -o json | grep -q '"accelerator.podkernel.dev/count": "4"' ||
	fail "the node did not publish its labels"
"$BIN/podagent" --no-udev --no-netlink --hwloc-xml "$FIXTURES/power8gpudistances.xml" \
	--node-name cert-node-1 --publish "$PODKERNEL_SERVER" --ca-file "$WORK/ca.crt" \
	--client-certificate "$WORK/node1.crt" --client-key "$WORK/node1.key" --interval 1 \
	>> "$WORK/agent.log" 2>&1 &
E2E_PIDS="$E2E_PIDS $!"
wait_for 10 sh -c "curl -sf --cacert '$WORK/ca.crt' --cert '$WORK/admin.crt' --key '$WORK/admin.key' \
	'$PODKERNEL_SERVER/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/cert-node-1' |
	grep -q '\"holderIdentity\":\"cert-node-1\"'" || fail "no Lease renewed with the node's certificate"

# NodeRestriction: not another node
cat > "$WORK/other-node.yaml" <<'EOF2'
apiVersion: v1
kind: Node
metadata: {name: cert-node-2}
EOF2
as node1 apply -f "$WORK/other-node.yaml" > "$WORK/out" 2>&1 && fail "a node created another Node"
grep -q "HTTP 403" "$WORK/out" || fail "expected 403: $(cat "$WORK/out")"
as admin apply -f "$WORK/other-node.yaml" > /dev/null 2>&1 || fail "admin certificate refused"
# another CA's certificate is no identity; nothing at all is 401 too
as rogue get nodes > "$WORK/out" 2>&1 && fail "a certificate of another CA was accepted"
grep -q "HTTP 401" "$WORK/out" || fail "expected 401: $(cat "$WORK/out")"
"$BIN/podctl" get nodes > "$WORK/out" 2>&1 && fail "anonymous request accepted"

# a kubeconfig with the certificate embedded (kubectl config --embed-certs), for podctl and kubectl
KC="$WORK/admin.kubeconfig"
kubectl config --kubeconfig "$KC" set-cluster pk --server "$PODKERNEL_SERVER" \
	--certificate-authority "$WORK/ca.crt" --embed-certs > /dev/null
kubectl config --kubeconfig "$KC" set-credentials alice --client-certificate "$WORK/admin.crt" \
	--client-key "$WORK/admin.key" --embed-certs > /dev/null
kubectl config --kubeconfig "$KC" set-context pk --cluster pk --user alice > /dev/null
kubectl config --kubeconfig "$KC" use-context pk > /dev/null
env -u PODKERNEL_CA_FILE "$BIN/podctl" --kubeconfig "$KC" get node cert-node-2 > /dev/null ||
	fail "podctl with client-certificate-data"
timeout 30 kubectl --kubeconfig "$KC" get node cert-node-1 > /dev/null 2>&1 || fail "kubectl with the same"
# podagent with a kubeconfig holding the node's certificate (as a kubelet's)
NKC="$WORK/node1.kubeconfig"
kubectl config --kubeconfig "$NKC" set-cluster pk --server "$PODKERNEL_SERVER" \
	--certificate-authority "$WORK/ca.crt" --embed-certs > /dev/null
kubectl config --kubeconfig "$NKC" set-credentials node --client-certificate "$WORK/node1.crt" \
	--client-key "$WORK/node1.key" --embed-certs > /dev/null
kubectl config --kubeconfig "$NKC" set-context node --cluster pk --user node > /dev/null
"$BIN/podagent" --once --no-udev --no-netlink --hwloc-xml "$FIXTURES/24em64t-2n6c2t-pci.xml" \
	--node-name cert-node-1 --kubeconfig "$NKC" --context node 2> "$WORK/agent2.err" ||
	fail "podagent --kubeconfig: $(cat "$WORK/agent2.err")"
as admin get node cert-node-1 -o json | grep -q '"accelerator.podkernel.dev/count": "3"' ||
	fail "podagent --kubeconfig did not publish"
echo "ok"
