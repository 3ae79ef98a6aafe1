#!/bin/sh
# Attach mode survives the loss of its watches: while a gang is pending
# (its pods select nodes labelled pool=late, which no node has yet), the
# stand-in cluster is killed with SIGKILL and restarted on the same port.
# Its watch history starts empty after a restart, so the attached
# podkerneld's informers, which retry with backoff while the cluster is
# down, are answered 410 Gone and list again.  Then four nodes get the
# label: the pending gang is bound on them, and a gang created after the
# restart is bound too (on four nodes labelled pool=early).  The scheduler
# authenticates with a client certificate here (kubeconfig -data fields).
set -eu
. "$PODKERNEL_SRC/tests/e2e/lib.sh"
. "$PODKERNEL_SRC/tests/e2e/attach_lib.sh"
need_python
need_tool curl

e2e_setup
ATTACH_AUTH=cert # a client certificate, CA and key as -data in the kubeconfig
attach_cluster_start
attach_register_board 1
attach_start a
HP=$ATTACH_PORT_a
wait_for 20 curl -sf "http://127.0.0.1:$HP/readyz" || { attach_dump; fail "never ready"; }

# gang NAME [nodeSelector]: a PodGroup of four 4-chip pods
gang() {
	printf 'apiVersion: scheduling.k8s.io/v1alpha3\nkind: PodGroup\nmetadata: {name: %s}\nspec:\n  schedulingPolicy: {gang: {minCount: 4}}\n' "$1" > "$WORK/$1.yaml"
	for i in 0 1 2 3; do
		printf -- '---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s-%s}\nspec:\n  schedulerName: podkernel\n  schedulingGroup: {podGroupName: %s}\n%s  containers: [{name: c, image: x, resources: {requests: {google.com/tpu: "4"}}}]\n' \
			"$1" "$i" "$1" "${2:+  nodeSelector: {$2\}
}" >> "$WORK/$1.yaml"
	done
	podctl apply -f "$WORK/$1.yaml" > /dev/null || fail "apply $1"
}
pending_told() {
	podctl get pod late-0 -o json | python3 -c '
import json, sys
c = [c for c in json.load(sys.stdin).get("status", {}).get("conditions", [])
     if c["type"] == "PodScheduled"]
sys.exit(0 if c and c[0]["status"] == "False" else 1)'
}

gang late "pool: late"
wait_for 20 pending_told || { attach_dump; fail "the pending gang was never attempted"; }

kill -9 "$CLUSTER_PID"
wait "$CLUSTER_PID" 2>/dev/null || true
sleep 2
attach_cluster_start
wait_for 20 curl -sf "http://127.0.0.1:$HP/readyz" || fail "not ready after the restart"

python3 - "$WORK/board-nodes.json" "$WORK/labelled.json" <<'EOF'
import json, sys
nodes = json.load(open(sys.argv[1]))
pools = {"tpu-ss0-h%d" % i: "late" for i in range(10, 14)}
pools.update({"tpu-ss0-h%d" % i: "early" for i in range(20, 24)})
items = [n for n in nodes["items"] if n["metadata"]["name"] in pools]
for n in items:
    n["metadata"]["labels"]["pool"] = pools[n["metadata"]["name"]]
json.dump({"apiVersion": "v1", "kind": "List", "items": items}, open(sys.argv[2], "w"))
EOF
podctl apply -f "$WORK/labelled.json" > /dev/null || fail "labelling nodes"
gang after "pool: early"

wait_for 30 has_bound 8 || { attach_dump; fail "the gangs were not bound after the restart"; }
for i in 0 1 2 3; do
	case "$(bound_to "late-$i")" in
	tpu-ss0-h1[0-3]) ;;
	*) attach_dump; fail "late-$i is on $(bound_to "late-$i"), not a pool=late node" ;;
	esac
done
curl -sf "http://127.0.0.1:$HP/metrics" > "$WORK/metrics.txt" || fail "/metrics"
python3 - "$WORK/metrics.txt" <<'EOF' || fail "the informers did not list again"
import re, sys
text = open(sys.argv[1]).read()
lists = int(re.search(r'podkernel_attach_informer_total\{resource="nodes",what="lists"\} (\d+)', text).group(1))
assert lists >= 2, lists
print("nodes listed %d times" % lists)
EOF
echo "PASS: attach watch loss"
