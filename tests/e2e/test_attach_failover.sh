#!/bin/sh
# Attach mode with --leader-elect: two podkerneld instances attached to one
# stand-in cluster elect a leader through the Lease kube-system/
# podkernel-scheduler (default timings: 10 s lease, 7 s renew deadline,
# 2 s retry).  Exactly one binds.  A leader frozen with SIGSTOP loses the
# Lease: the standby binds new pods within 15 s, and the old leader, thawed,
# writes nothing (its leadership ended with its renew deadline).  Then the
# new leader is killed with SIGKILL and the thawed instance binds new pods
# within 15 s; stopped with SIGTERM, that one hands the Lease to a third
# instance at once.  A watch on the cluster's pods, open the whole time,
# proves that no pod was ever bound twice or moved.
set -eu
. "$PODKERNEL_SRC/tests/e2e/lib.sh"
. "$PODKERNEL_SRC/tests/e2e/attach_lib.sh"
need_python
need_tool curl

e2e_setup
attach_cluster_start
attach_register_board 1
AUTH="Authorization: Bearer $ADMIN_TOKEN"
rv=$(curl -sf --cacert "$WORK/cert.pem" -H "$AUTH" "$PODKERNEL_SERVER/api/v1/pods" |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["resourceVersion"])')
curl -sfN --cacert "$WORK/cert.pem" -H "$AUTH" \
	"$PODKERNEL_SERVER/api/v1/pods?watch=1&resourceVersion=$rv" > "$WORK/watch.jsonl" &
WATCH_PID=$!
E2E_PIDS="$E2E_PIDS $WATCH_PID"

attach_start a --leader-elect
attach_start b --leader-elect

holder() {
	curl -sf --cacert "$WORK/cert.pem" -H "$AUTH" \
		"$PODKERNEL_SERVER/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/podkernel-scheduler" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["spec"].get("holderIdentity",""))'
}
has_holder() { [ -n "$(holder)" ]; }
wait_for 20 has_holder || { attach_dump; fail "no leader elected"; }
# identities end in _PID
case "$(holder)" in
*_"$ATTACH_PID_a") L=a S=b ;;
*_"$ATTACH_PID_b") L=b S=a ;;
*) fail "lease held by an unknown identity: $(holder)" ;;
esac
eval "LPID=\$ATTACH_PID_$L SPID=\$ATTACH_PID_$S"
echo "leader: $L (pid $LPID), standby: $S (pid $SPID)"
eval "SPORT=\$ATTACH_PORT_$S"
# the standby is ready (its mirror synced, its scheduler fed) but not leading
wait_for 20 curl -sf "http://127.0.0.1:$SPORT/readyz" || fail "the standby is not ready"
curl -sf "http://127.0.0.1:$SPORT/metrics" > "$WORK/standby.txt" || fail "standby /metrics"
grep -q '^podkernel_attach_leader 0' "$WORK/standby.txt" || fail "the standby says it leads"
grep -q '^podkernel_attach_mirror_objects [1-9]' "$WORK/standby.txt" ||
	fail "the standby's mirror is empty"

# gangs NAME: two gangs of 4 one-chip pods, schedulerName podkernel
gangs() {
	: > "$WORK/$1.yaml"
	for g in 0 1; do
		printf 'apiVersion: scheduling.k8s.io/v1alpha3\nkind: PodGroup\nmetadata: {name: %s-%s}\nspec:\n  schedulingPolicy: {gang: {minCount: 4}}\n  schedulingConstraints: {topology: [{key: topology.podkernel.dev/cube}]}\n---\n' \
			"$1" "$g" >> "$WORK/$1.yaml"
		for i in 0 1 2 3; do
			printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: %s-%s-%s}\nspec:\n  schedulerName: podkernel\n  schedulingGroup: {podGroupName: %s-%s}\n  containers: [{name: c, image: x, resources: {requests: {google.com/tpu: "1"}}}]\n---\n' \
				"$1" "$g" "$i" "$1" "$g" >> "$WORK/$1.yaml"
		done
	done
	podctl apply -f "$WORK/$1.yaml" > /dev/null || fail "apply $1"
}
binds() { grep -c "bound pod" "$WORK/attach-$1.log" || true; }

gangs first
wait_for 20 has_bound 8 || { attach_dump; fail "the leader did not bind"; }
[ "$(binds "$L")" = 8 ] || { attach_dump; fail "leader $L bound $(binds "$L") of 8"; }
[ "$(binds "$S")" = 0 ] || { attach_dump; fail "standby $S bound pods"; }

# Freeze the leader: the standby takes over.
kill -STOP "$LPID"
t0=$(date +%s)
gangs second
wait_for 15 has_bound 16 || { attach_dump; fail "standby $S did not take over within 15 s"; }
echo "takeover after SIGSTOP: $(($(date +%s) - t0)) s"
[ "$(binds "$S")" = 8 ] || { attach_dump; fail "standby $S bound $(binds "$S") of 8"; }
before=$(binds "$L")
kill -CONT "$LPID"
gangs third
wait_for 15 has_bound 24 || { attach_dump; fail "the new leader did not bind after the thaw"; }
sleep 2
[ "$(binds "$L")" = "$before" ] || { attach_dump; fail "the thawed old leader $L wrote"; }

# Kill the new leader: the old one leads again.
kill -9 "$SPID"
t0=$(date +%s)
gangs fourth
wait_for 15 has_bound 32 || { attach_dump; fail "no takeover within 15 s of kill -9"; }
echo "takeover after SIGKILL: $(($(date +%s) - t0)) s"

# A leader stopped with SIGTERM gives the Lease back: a new standby takes
# over at its next retry (2 s), not after the lease duration.  c names the
# default Lease with the contract's flags: it is the same Lease.
attach_start c --leader-elect --leader-elect-namespace kube-system \
	--leader-elect-lease-name podkernel-scheduler
wait_for 20 curl -sf "http://127.0.0.1:$ATTACH_PORT_c/readyz" || fail "c is not ready"
kill -TERM "$LPID"
wait "$LPID" 2>/dev/null || true
t0=$(date +%s)
holds_c() { case "$(holder)" in *_"$ATTACH_PID_c") return 0 ;; esac; return 1; }
wait_for 6 holds_c || { attach_dump; fail "the Lease was not handed over at SIGTERM"; }
echo "handover after SIGTERM: $(($(date +%s) - t0)) s"
grep -q "released lease" "$WORK/attach-$L.log" || fail "the leader did not say it released the Lease"

kill "$WATCH_PID" 2>/dev/null || true
python3 - "$WORK/watch.jsonl" <<'EOF' || fail "a pod was bound twice"
import json, sys
nodes, binds = {}, {}
for line in open(sys.argv[1]):
    line = line.strip()
    if not line:
        continue
    ev = json.loads(line)
    if ev.get("type") not in ("ADDED", "MODIFIED"):
        continue
    pod = ev["object"]
    name = pod["metadata"]["name"]
    node = pod.get("spec", {}).get("nodeName")
    if not node:
        assert name not in nodes, "%s lost its node" % name
        continue
    if name in nodes:
        assert nodes[name] == node, "%s moved from %s to %s" % (name, nodes[name], node)
    else:
        nodes[name] = node
        binds[name] = binds.get(name, 0) + 1
assert len(nodes) == 32, len(nodes)
assert all(v == 1 for v in binds.values())
print("watch: 32 pods, each bound once")
EOF
echo "PASS: attach failover"
