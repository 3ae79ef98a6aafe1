#!/bin/sh
# End to end: kill -9 while the scheduling loop commits its batched writes.
# A simulated board of 512 hosts (32 cubes of 16) gets 160 cube-bound gangs
# of four whole-host pods: 128 fit, so capacity decides and every round
# writes many bindings and conditions in one transaction.  A watch records
# every binding the store published (published only after the commit: an
# acknowledged write).  podkerneld is killed with SIGKILL three times while
# the gangs are created and bound, and restarted on the same data.  Then:
# every binding the watch saw is still there on the same node, gangs are
# whole and inside one cube, no node is overcommitted, and the cluster fills.
set -eu
. "$PODKERNEL_SRC/tests/e2e/lib.sh"
need_python
need_tool curl
e2e_setup

GANGS=160
python3 - "$GANGS" > "$WORK/gangs.yaml" <<'EOF'
import sys
for g in range(int(sys.argv[1])):
    print(f"""---
apiVersion: scheduling.k8s.io/v1alpha3
kind: PodGroup
metadata: {{name: gang-{g}}}
spec:
  workloadRef: {{workloadName: crash, templateName: gang}}
  schedulingPolicy: {{gang: {{minCount: 4}}}}
  schedulingConstraints: {{topology: [{{key: topology.podkernel.dev/cube}}]}}""")
    for i in range(4):
        print(f"""---
apiVersion: v1
kind: Pod
metadata: {{name: gang-{g}-{i}}}
spec:
  schedulingGroup: {{podGroupName: gang-{g}}}
  containers: [{{name: c, image: x, resources: {{requests: {{google.com/tpu: "4"}}}}}}]""")
EOF

# watch_bindings FILE: every pod event of the default namespace, from the start
watch_bindings() {
	curl -sN -H "Authorization: Bearer $ADMIN_TOKEN" \
		"$PODKERNEL_SERVER/api/v1/namespaces/default/pods?watch=true&resourceVersion=0" \
		>> "$1" 2>/dev/null &
	WATCH_PID=$!
	E2E_PIDS="$E2E_PIDS $WATCH_PID"
}

BOARD="$PODKERNEL_SRC/boards/tpu-superslice.yaml"
for delay in 0.5 1.5 3; do
	e2e_start_server --simulate-board "$BOARD" -v 1
	watch_bindings "$WORK/watched.jsonl"
	(podctl apply -f "$WORK/gangs.yaml" > /dev/null 2>&1 || true) &
	APPLY=$!
	sleep "$delay"
	kill -9 "$SERVER_PID"
	wait "$APPLY" 2> /dev/null || true
	kill "$WATCH_PID" 2> /dev/null || true
	wait "$WATCH_PID" 2> /dev/null || true
done

# The last run: everything created, the cluster fills.
e2e_start_server --simulate-board "$BOARD" -v 1
podctl apply -f "$WORK/gangs.yaml" > /dev/null || fail "apply the gangs"
wait_for 60 has_bound 512 default || fail "the cluster did not fill: $(bound_count default) of 512 bound"
sleep 1
check_placement
[ "$(bound_count default)" -eq 512 ] || fail "more pods bound than hosts: $(bound_count default)"
podctl get pods -o json > "$WORK/final.json"
python3 - "$WORK/watched.jsonl" "$WORK/final.json" <<'EOF' || fail "an acknowledged binding was lost or moved"
import json, sys
seen = {}
with open(sys.argv[1]) as f:
    for line in f:
        try:
            ev = json.loads(line)
        except ValueError:
            continue  # the line the kill cut short
        obj = ev.get("object", {})
        node = obj.get("spec", {}).get("nodeName")
        if ev.get("type") in ("ADDED", "MODIFIED") and node:
            name = obj["metadata"]["name"]
            if seen.setdefault(name, node) != node:
                print(f"{name} was published on {seen[name]} and on {node}")
                sys.exit(1)
final = {p["metadata"]["name"]: p["spec"].get("nodeName") for p in json.load(open(sys.argv[2]))["items"]}
lost = [n for n, node in seen.items() if final.get(n) != node]
print(f"batch crash: {len(seen)} bindings acknowledged before the kills, {len(lost)} lost or moved")
sys.exit(1 if lost or not seen else 0)
EOF
echo "ok"
