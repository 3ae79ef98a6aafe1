#!/bin/sh
# Node heartbeats end to end: podagent renews a coordination.k8s.io/v1 Lease
# per node every --interval (here in a namespace of the operator's choosing,
# the same on both sides) and writes its Node only when something changed;
# podkerneld's node-loss monitor reads the Leases: an agent killed with -9
# leaves its node tainted unreachable after the grace period, and the node
# is Ready again when the agent comes back (also after a restart of
# podkerneld in between).  A node that still uses the
# older heartbeat annotation is monitored too (honoured for a release).
set -eu
. "$PODKERNEL_SRC/tests/e2e/lib.sh"
need_python
need_fixtures
need_tool kubectl

e2e_setup
e2e_tls
export PODKERNEL_NODE_GRACE_SECONDS=3
LNS=podkernel-node-lease
for n in lease-a old-b; do e2e_node_token "$n" > /dev/null; done
e2e_start_server -v 2 --node-lease-namespace "$LNS"
e2e_kubeconfig
e2e_agent lease-a power8gpudistances.xml --lease-namespace "$LNS"
wait_for 20 podctl get node lease-a || fail "node lease-a was not registered"
wait_for 10 kc get lease -n "$LNS" lease-a || fail "no Lease for lease-a"
[ "$(kc get lease -n "$LNS" lease-a -o jsonpath='{.spec.holderIdentity}')" = lease-a ] ||
	fail "Lease holder is not the node"
[ "$(kc get lease -n "$LNS" lease-a -o jsonpath='{.spec.leaseDurationSeconds}')" = 40 ] ||
	fail "Lease duration is not 40 s"

# Renewals change the Lease every second; the Node stays as it was.
node_rv=$(kc get node lease-a -o jsonpath='{.metadata.resourceVersion}')
lease_rv=$(kc get lease -n "$LNS" lease-a -o jsonpath='{.metadata.resourceVersion}')
sleep 3
[ "$(kc get node lease-a -o jsonpath='{.metadata.resourceVersion}')" = "$node_rv" ] ||
	fail "the Node was written although nothing changed"
[ "$(kc get lease -n "$LNS" lease-a -o jsonpath='{.metadata.resourceVersion}')" != "$lease_rv" ] ||
	fail "the Lease was not renewed"
kc get node lease-a -o jsonpath='{.metadata.annotations}' | grep -q 'agent.podkernel.dev/heartbeat' &&
	fail "the agent still writes the heartbeat annotation"
podctl get node lease-a | grep -q ' Ready ' || fail "lease-a is not Ready while renewing"

echo "--- lease-a's agent stops renewing"
kill -9 "$AGENT_PID_lease_a"
wait_for 20 sh -c "'$BIN/podctl' get node lease-a | grep -q Unreachable" ||
	fail "lease-a was not marked unreachable"
podctl describe node lease-a | grep -q 'node.kubernetes.io/unreachable:NoExecute' ||
	fail "lease-a lacks the unreachable taint"
grep -q "node lease-a: no heartbeat" "$WORK/podkerneld.log" || fail "no node-loss log line"

echo "--- podkerneld restarts (kill -9) while lease-a is tainted; then the agent comes back"
kill -9 "$SERVER_PID"
wait "$SERVER_PID" 2> /dev/null || true
e2e_start_server -v 2 --node-lease-namespace "$LNS"
e2e_kubeconfig # the new port
podctl describe node lease-a | grep -q 'node.kubernetes.io/unreachable' || fail "taint lost in the restart"
e2e_agent lease-a power8gpudistances.xml --lease-namespace "$LNS"
wait_for 20 sh -c "'$BIN/podctl' get node lease-a | grep -q ' Ready '" || fail "lease-a did not recover"
podctl describe node lease-a | grep -q 'node.kubernetes.io/unreachable' && fail "taint stayed"

echo "--- a Lease in another namespace is not a node heartbeat"
kc apply -f - > /dev/null <<'EOF' || fail "kubectl apply lease"
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: old-b, namespace: kube-node-lease}
spec: {holderIdentity: old-b, leaseDurationSeconds: 40}
EOF

echo "--- the older heartbeat annotation is still honoured"
beat() {
	curl -sf --cacert "$E2E_CA" -H "Authorization: Bearer $(e2e_node_token old-b)" \
		-H 'Content-Type: application/merge-patch+json' -X PATCH \
		-d "{\"metadata\":{\"annotations\":{\"agent.podkernel.dev/heartbeat\":\"$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)\"}}}" \
		"$PODKERNEL_SERVER/api/v1/nodes/old-b" > /dev/null
}
kc apply -f - > /dev/null <<'EOF' || fail "kubectl apply node"
apiVersion: v1
kind: Node
metadata: {name: old-b}
status: {allocatable: {cpu: "4"}}
EOF
for _ in 1 2 3 4 5 6; do beat || fail "heartbeat patch"; sleep 1; done
podctl get node old-b | grep -q ' Ready ' || fail "old-b is not Ready while beating"
# its Lease outside the node lease namespace keeps being renewed: no heartbeat
( while :; do
	kc patch lease -n kube-node-lease old-b --type merge \
		-p "{\"spec\":{\"renewTime\":\"$(date -u +%Y-%m-%dT%H:%M:%S.000000Z)\"}}" > /dev/null 2>&1
	sleep 0.5
done ) &
E2E_PIDS="$E2E_PIDS $!"
wait_for 20 sh -c "'$BIN/podctl' get node old-b | grep -q Unreachable" ||
	fail "old-b was not marked unreachable after its annotation heartbeats stopped"
echo "ok"
