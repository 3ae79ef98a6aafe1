#!/bin/sh
# podctl schedule: a JobSet on a simulated GPU cluster end to end, output
# formats, --explain, --strategy, preemption report, and exit codes.
# Needs $PODKERNEL_BIN/podctl and $PODKERNEL_SRC (set by tests/run-tests.sh).
set -u
BIN=${PODKERNEL_BIN:-build/bin}
SRC=${PODKERNEL_SRC:-.}
PODCTL="$BIN/podctl"
if [ ! -x "$PODCTL" ]; then
	echo "test_podctl_schedule: $PODCTL not built" >&2
	exit 1
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
check() { # check NAME CONDITION-RESULT
	if [ "$2" = 0 ]; then echo "ok   $1"; else echo "FAIL $1" >&2; fail=1; fi
}
run() { # run EXPECTED-RC ARGS... ; stdout in $T/out, stderr in $T/err
	want=$1
	shift
	"$PODCTL" "$@" >"$T/out" 2>"$T/err"
	rc=$?
	[ "$rc" = "$want" ]
}
flat() { tr -d ' \n\t' <"$1"; }

# A JobSet (launcher + 2 trainer replicas of 4 GPU pods, block/rack topology)
# compiled and scheduled on the gpu-cluster board's simulated nodes.
"$PODCTL" board nodes "$SRC/boards/gpu-cluster.yaml" >"$T/nodes.json"
check "board nodes" $?
run 0 schedule -f "$T/nodes.json" -f "$SRC/examples/jobs/jobset-gpu-racks.yaml" --explain
check "jobset schedules (rc=$rc)" $?
[ "$(flat "$T/out" | grep -o '"nodeName":"[^"]*"' | wc -l)" = 9 ]
check "all 9 pods bound" $?
if command -v python3 >/dev/null; then
	python3 - "$T/out" <<'PY'
import json, sys
items = json.load(open(sys.argv[1]))["items"]
labels = {o["metadata"]["name"]: o["metadata"].get("labels", {}) for o in items if o["kind"] == "Node"}
racks, blocks = {}, set()
for o in items:
    g = o.get("spec", {}).get("schedulingGroup", {}).get("podGroupName", "")
    if o["kind"] != "Pod" or "trainer" not in g:
        continue
    l = labels[o["spec"]["nodeName"]]
    blocks.add(l["topology.podkernel.dev/block"])
    racks.setdefault(g, set()).add(l["topology.podkernel.dev/rack"])
assert len(blocks) == 1, blocks
assert len(racks) == 2 and all(len(r) == 1 for r in racks.values()), racks
PY
	check "trainers in one block, each replica in one rack" $?
fi
flat "$T/out" | grep -q '"type":"CompositePodGroupInitiallyScheduled","status":"True"'
check "root condition True" $?
grep -q "chosen topology.podkernel.dev/block=" "$T/err"
check "--explain trace on stderr" $?
grep -q "S=4 R=0 U=0 UU=0 -> Success" "$T/err"
check "--explain shows counts" $?

run 0 schedule -f "$T/nodes.json" -f "$SRC/examples/jobs/jobset-gpu-racks.yaml" -o yaml
check "yaml output (rc=$rc)" $?
grep -q '^kind: List' "$T/out"
check "yaml List" $?
[ ! -s "$T/err" ]
check "quiet without --explain" $?

cat >"$T/preempt.yaml" <<'YAML'
apiVersion: v1
kind: Node
metadata: {name: n0}
status: {allocatable: {cpu: "2"}}
---
apiVersion: v1
kind: Pod
metadata: {name: low, namespace: batch}
spec:
  nodeName: n0
  priority: 1
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "2"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: high, namespace: batch}
spec:
  priority: 1000
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "2"}}}]
YAML
run 0 schedule -f "$T/preempt.yaml"
check "preemption run (rc=$rc)" $?
grep -qx "preempted: batch/low" "$T/err"
check "victim reported on stderr" $?
! flat "$T/out" | grep -q '"name":"low"'
check "victim left out of the List" $?
flat "$T/out" | grep -q '"nodeName":"n0"'
check "preemptor bound in a later cycle" $?

cat >"$T/bad.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: broken}
spec:
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "lots"}}}]
YAML
run 2 schedule -f "$T/bad.yaml"
check "invalid input exits 2 (rc=$rc)" $?
grep -q "bad.yaml" "$T/err" && grep -q "spec.containers" "$T/err"
check "error names file and field path" $?

# Offline inputs are files of whole clusters, not API requests: a 4,096-host
# cluster (4.5 MB of JSON, over the 3 MiB request limit) schedules;
# --max-input-size lowers or raises the file limit (exit 2 over it, naming
# the flag); a bad size is a usage error.
"$PODCTL" board nodes "$SRC/boards/tpu-superslice.yaml" --superslices 16 >"$T/n16.json"
check "board nodes of 16 superslices" $?
[ "$(wc -c <"$T/n16.json")" -gt 3145728 ]
check "cluster file is over the request limit" $?
cat >"$T/gang.yaml" <<'YAML'
apiVersion: scheduling.k8s.io/v1alpha3
kind: PodGroup
metadata: {name: big}
spec:
  workloadRef: {workloadName: big, templateName: big}
  schedulingPolicy: {gang: {minCount: 4}}
  schedulingConstraints: {topology: [{key: topology.podkernel.dev/cube}]}
YAML
for i in 0 1 2 3; do
	printf -- '---\napiVersion: v1\nkind: Pod\nmetadata: {name: big-%d}\nspec:\n  schedulingGroup: {podGroupName: big}\n  containers: [{name: c, image: x, resources: {requests: {google.com/tpu: "4"}}}]\n' "$i" >>"$T/gang.yaml"
done
run 0 schedule -f "$T/n16.json" -f "$T/gang.yaml" -o yaml
check "a 4.5 MB cluster file schedules (rc=$rc)" $?
[ "$(grep -c 'nodeName: tpu-' "$T/out")" = 4 ]
check "the gang on it is bound" $?
run 2 schedule -f "$T/n16.json" -f "$T/gang.yaml" --max-input-size 1Mi
check "--max-input-size 1Mi refuses it (rc=$rc)" $?
grep -q "n16.json:1:1: input is larger than 1048576 bytes (1.0 MiB); --max-input-size raises the limit" "$T/err"
check "the limit message names the file and the flag" $?
run 0 schedule -f "$T/n16.json" -f "$T/gang.yaml" --max-input-size=8Mi
check "--max-input-size=8Mi admits it (rc=$rc)" $?
run 2 schedule -f "$T/gang.yaml" --max-input-size lots
check "a bad --max-input-size exits 2 (rc=$rc)" $?
run 2 validate -f "$T/n16.json" --max-input-size 1Mi
check "validate --max-input-size 1Mi refuses it (rc=$rc)" $?
run 0 validate -f "$T/n16.json"
check "validate reads it by default (rc=$rc)" $?

# A number that overflows a double is bad input at its position (it used to
# be reported with an empty message).
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: big}\nspec:\n  priority: 1e400\n' >"$T/big.yaml"
run 2 schedule -f "$T/big.yaml"
check "number overflow exits 2 (rc=$rc)" $?
grep -q "big.yaml:5:13: number 1e400 is out of range" "$T/err"
check "number overflow names FILE:LINE:COL" $?

# Namespace objects stay: a namespaceSelector on their labels is enforced,
# in the pod's own anti-affinity term and in the symmetric rule of a bound
# pod's; an unbound pod of another spec.schedulerName is left alone.
cat >"$T/ns.yaml" <<'EOF'
apiVersion: v1
kind: Namespace
metadata: {name: team-a, labels: {team: a}}
---
apiVersion: v1
kind: Node
metadata: {name: only, labels: {kubernetes.io/hostname: only}}
status: {allocatable: {cpu: "8", pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: a-web, namespace: team-a, labels: {app: web}}
spec:
  nodeName: only
  containers: [{name: c, image: busybox}]
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: sym}}, namespaceSelector: {matchLabels: {team: b}}}
---
apiVersion: v1
kind: Namespace
metadata: {name: team-b, labels: {team: b}}
---
apiVersion: v1
kind: Pod
metadata: {name: own, namespace: team-b}
spec:
  containers: [{name: c, image: busybox}]
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: web}}, namespaceSelector: {matchLabels: {team: a}}}
---
apiVersion: v1
kind: Pod
metadata: {name: sym, namespace: team-b, labels: {app: sym}}
spec:
  containers: [{name: c, image: busybox}]
---
apiVersion: v1
kind: Pod
metadata: {name: theirs}
spec:
  schedulerName: other-scheduler
  containers: [{name: c, image: busybox}]
---
apiVersion: v1
kind: Pod
metadata: {name: ours}
spec:
  schedulerName: podkernel
  hostNetwork: true
  containers: [{name: c, image: busybox, ports: [{containerPort: 8080}]}]
EOF
run 0 schedule -f "$T/ns.yaml"
check "namespaceSelector file schedules (rc=$rc)" $?
[ "$(flat "$T/out" | grep -o '"kind":"Namespace"' | wc -l)" = 2 ]
check "Namespaces are kept in the output" $?
[ "$(flat "$T/out" | grep -o '"nodeName":"only"' | wc -l)" = 2 ]
check "only a-web and ours hold the node" $?
if command -v python3 >/dev/null; then
	python3 - "$T/out" <<'PY'
import json, sys
items = json.load(open(sys.argv[1]))["items"]
node = {o["metadata"]["name"]: o["spec"].get("nodeName") for o in items if o["kind"] == "Pod"}
assert node == {"a-web": "only", "own": None, "sym": None, "theirs": None, "ours": "only"}, node
PY
	check "own term and symmetric rule refuse; other schedulers' pod left alone" $?
fi
flat "$T/out" | grep -q '"containerPort":8080,"hostPort":8080'
check "a hostNetwork pod's containerPort is defaulted as its hostPort" $?
printf 'apiVersion: v1\nkind: Namespace\nmetadata: {labels: {team: [a]}}\n' >"$T/badns.yaml"
run 2 schedule -f "$T/badns.yaml"
check "a Namespace without a name exits 2 (rc=$rc)" $?
grep -q "metadata.name: Required value" "$T/err" && grep -q "metadata.labels.team: Invalid value" "$T/err"
check "a bad Namespace is named by field path" $?

# A gang member with scheduling gates counts toward minCount and the others
# are bound; --gated-gangs-wait holds the whole gang instead.
cat >"$T/gated.yaml" <<'EOF'
apiVersion: v1
kind: Node
metadata: {name: n}
status: {allocatable: {cpu: "8", pods: "10"}}
---
apiVersion: scheduling.k8s.io/v1alpha3
kind: PodGroup
metadata: {name: g}
spec: {schedulingPolicy: {gang: {minCount: 2}}}
---
apiVersion: v1
kind: Pod
metadata: {name: open}
spec: {schedulingGroup: {podGroupName: g}, containers: [{name: c, image: busybox}]}
---
apiVersion: v1
kind: Pod
metadata: {name: shut}
spec: {schedulingGroup: {podGroupName: g}, schedulingGates: [{name: q}], containers: [{name: c, image: busybox}]}
EOF
run 0 schedule -f "$T/gated.yaml"
[ "$(flat "$T/out" | grep -o '"nodeName":"n"' | wc -l)" = 1 ]
check "the ungated member of a gang is bound (rc=$rc)" $?
run 0 schedule -f "$T/gated.yaml" --gated-gangs-wait
[ "$(flat "$T/out" | grep -o '"nodeName":"n"' | wc -l)" = 0 ]
check "--gated-gangs-wait holds the gang (rc=$rc)" $?

run 2 schedule -f "$T/preempt.yaml" --strategy no-such
check "unknown strategy exits 2 (rc=$rc)" $?
grep -q "kep" "$T/err"
check "usage lists strategies" $?
run 0 schedule -f "$T/preempt.yaml" --strategy kep
check "--strategy kep (rc=$rc)" $?
run 2 schedule
check "no -f exits 2 (rc=$rc)" $?
run 2 schedule -f "$T/missing.yaml"
check "missing file exits 2 (rc=$rc)" $?
exit $fail
