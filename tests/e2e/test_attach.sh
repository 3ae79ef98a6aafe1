#!/bin/sh
# Attach mode end to end: a stand-in cluster (podkerneld --no-scheduling,
# TLS, token file) with the 256 hosts of one TPU superslice; a second
# podkerneld attached to it through a kubeconfig.  The KEP-6012 training
# story (a CompositePodGroup of 4 PodGroups of 8 pods: superslice, cube and
# host levels) submitted with schedulerName: podkernel is bound within its
# topology (check_placement.py); a pod of the default scheduler stays
# unbound; a bound pod of another scheduler takes capacity; a gang that
# cannot fit is told why in its condition and a FailedScheduling Event with
# the same message; Scheduled Events exist; a high-priority gang preempts a
# low-priority one (DisruptionTarget, DELETE with preconditions, a Preempted
# Event); a serving workload with a cube spread and host anti-affinity binds
# one pod per cube and host; a pod with a scheduling gate stays unbound
# (SchedulingGated) until its gate is removed; WaitForFirstConsumer claims are
# patched (a static local volume, a provisioner's selected node) before their
# pods' bindings; the attached instance serves
# only /healthz, /readyz and /metrics.
set -eu
. "$PODKERNEL_SRC/tests/e2e/lib.sh"
. "$PODKERNEL_SRC/tests/e2e/attach_lib.sh"
need_python
need_tool curl
trap 'attach_dump' USR1

e2e_setup
attach_cluster_start
attach_register_board 1
attach_start a
HP=$ATTACH_PORT_a
wait_for 20 curl -sf "http://127.0.0.1:$HP/readyz" || { attach_dump; fail "never ready"; }
curl -sf "http://127.0.0.1:$HP/healthz" > /dev/null || fail "/healthz"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$HP/api/v1/pods")
[ "$code" = 404 ] || fail "attach mode served /api/v1/pods ($code)"

# Capacity taken by another scheduler's bound pod: tpu-ss0-h255 is full.
cat > "$WORK/foreign.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: foreign-bound}
spec:
  schedulerName: default-scheduler
  nodeName: tpu-ss0-h255
  containers: [{name: c, image: x, resources: {requests: {google.com/tpu: "4"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: plain}
spec:
  schedulerName: default-scheduler
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: wants-full-node}
spec:
  schedulerName: podkernel
  nodeSelector: {kubernetes.io/hostname: tpu-ss0-h255}
  containers: [{name: c, image: x, resources: {requests: {google.com/tpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: wants-free-node}
spec:
  schedulerName: podkernel
  nodeSelector: {kubernetes.io/hostname: tpu-ss0-h254}
  containers: [{name: c, image: x, resources: {requests: {google.com/tpu: "1"}}}]
EOF
podctl apply -f "$WORK/foreign.yaml" > /dev/null || fail "apply foreign.yaml"

# The training story, for podkernel.
sed 's/^  schedulingGroup:/  schedulerName: podkernel\n  schedulingGroup:/' \
	"$PODKERNEL_SRC/examples/stories/training.yaml" > "$WORK/training.yaml"
[ "$(grep -c 'schedulerName: podkernel' "$WORK/training.yaml")" = 32 ] || fail "story edit"
podctl apply -f "$WORK/training.yaml" > /dev/null || fail "apply training.yaml"

wait_for 30 has_bound 32 training || { attach_dump; fail "the training gang was not bound"; }
check_placement
[ "$(bound_to wants-free-node)" = tpu-ss0-h254 ] || { attach_dump; fail "wants-free-node"; }

# A gang that cannot fit: two pods of 5 chips (hosts have 4).
cat > "$WORK/toobig.yaml" <<'EOF'
apiVersion: scheduling.k8s.io/v1alpha3
kind: PodGroup
metadata: {name: toobig}
spec:
  schedulingPolicy: {gang: {minCount: 2}}
EOF
for i in 0 1; do cat >> "$WORK/toobig.yaml" <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: toobig-$i}
spec:
  schedulerName: podkernel
  schedulingGroup: {podGroupName: toobig}
  containers: [{name: c, image: x, resources: {requests: {google.com/tpu: "5"}}}]
EOF
done
podctl apply -f "$WORK/toobig.yaml" > /dev/null || fail "apply toobig.yaml"

events() {
	curl -sf --cacert "$WORK/cert.pem" -H "Authorization: Bearer $ADMIN_TOKEN" \
		"$PODKERNEL_SERVER/apis/events.k8s.io/v1/namespaces/$1/events"
}
has_failed_event() {
	podctl get pod toobig-0 -o json > "$WORK/toobig-0.json" || return 1
	events default | python3 -c '
import json, sys
pod = json.load(open(sys.argv[1]))
msg = [c for c in pod.get("status", {}).get("conditions", [])
       if c["type"] == "PodScheduled"][0]["message"]
items = json.load(sys.stdin)["items"]
sys.exit(0 if any(e.get("reason") == "FailedScheduling" and e.get("note") == msg and
                  e.get("regarding", {}).get("name") == "toobig-0" for e in items) else 1)' \
		"$WORK/toobig-0.json"
}
wait_for 20 has_failed_event ||
	{ attach_dump; fail "no FailedScheduling Event for toobig-0 with its condition's message"; }

# The Event says what the condition says.
podctl get pod toobig-0 -o json > "$WORK/toobig-0.json"
events default > "$WORK/events-default.json"
events training > "$WORK/events-training.json"
# the same Events read as core v1 ones, as kubectl events and describe read them
curl -sf --cacert "$WORK/cert.pem" -H "Authorization: Bearer $ADMIN_TOKEN" \
	"$PODKERNEL_SERVER/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dtoobig-0" \
	> "$WORK/events-core.json" || fail "core v1 Events"
python3 - "$WORK" <<'EOF' || fail "Events"
import json, sys
w = sys.argv[1]
pod = json.load(open(w + "/toobig-0.json"))
cond = [c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled"][0]
assert cond["status"] == "False", cond
ev = [e for e in json.load(open(w + "/events-default.json"))["items"]
      if e["reason"] == "FailedScheduling" and e["regarding"]["name"] == "toobig-0"]
ev.sort(key=lambda e: e["eventTime"])
assert ev and ev[-1]["note"] == cond["message"][:1023], (ev, cond)
assert ev[-1]["type"] == "Warning" and ev[-1]["apiVersion"] == "events.k8s.io/v1"
core = [e for e in json.load(open(w + "/events-core.json"))["items"]
        if e.get("reason") == "FailedScheduling" and e.get("message") == ev[-1]["note"]]
assert core and core[0]["involvedObject"]["name"] == "toobig-0", core
sched = [e for e in json.load(open(w + "/events-training.json"))["items"]
         if e["reason"] == "Scheduled"]
names = {e["regarding"]["name"] for e in sched}
assert len(names) == 32, len(names)
assert all(e["note"].startswith("Successfully assigned training/") for e in sched)
print("events: FailedScheduling matches the condition; %d Scheduled" % len(sched))
EOF

# Other schedulers' pods are left alone.
[ -z "$(bound_to plain)" ] || fail "a default-scheduler pod was bound"
[ -z "$(bound_to wants-full-node)" ] || fail "a pod was bound to a node another scheduler filled"
[ "$(bound_to foreign-bound)" = tpu-ss0-h255 ] || fail "the foreign pod moved"
curl -sf "http://127.0.0.1:$HP/metrics" > "$WORK/metrics.txt" || fail "/metrics"
grep -q '^podkernel_attach_ready 1' "$WORK/metrics.txt" || fail "metrics: not ready"
grep -q 'podkernel_attach_informer_total{resource="pods",what="lists"} 1' "$WORK/metrics.txt" ||
	fail "metrics: pods listed more than once"

# Preemption: a high-priority gang needs the host a low-priority one holds.
# The victim gets DisruptionTarget, then is deleted (uid and resourceVersion
# preconditions), with a Preempted Event; the preemptor is bound there.
cat > "$WORK/classes.yaml" <<'EOF'
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: low}
value: 100
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 10000
EOF
podctl apply -f "$WORK/classes.yaml" > /dev/null || fail "apply classes.yaml"
prio_gang() { # NAME CLASS
	cat > "$WORK/$1.yaml" <<EOF
apiVersion: scheduling.k8s.io/v1alpha3
kind: PodGroup
metadata: {name: $1}
spec:
  schedulingPolicy: {gang: {minCount: 1}}
  disruptionMode: {all: {}}
  priorityClassName: $2
---
apiVersion: v1
kind: Pod
metadata: {name: $1-0}
spec:
  schedulerName: podkernel
  priorityClassName: $2
  schedulingGroup: {podGroupName: $1}
  nodeSelector: {kubernetes.io/hostname: tpu-ss0-h200}
  containers: [{name: c, image: x, resources: {requests: {google.com/tpu: "4"}}}]
EOF
	podctl apply -f "$WORK/$1.yaml" > /dev/null || fail "apply $1"
}
sleep 1 # the classes reach the mirror before the pods that name them
prio_gang victim low
on_h200() { [ "$(bound_to "$1")" = tpu-ss0-h200 ]; }
wait_for 20 on_h200 victim-0 || { attach_dump; fail "the victim was not bound"; }
prio_gang preemptor high
gone() { ! podctl get pod "$1" > /dev/null 2>&1; }
wait_for 20 gone victim-0 || { attach_dump; fail "the victim was not preempted"; }
wait_for 20 on_h200 preemptor-0 || { attach_dump; fail "the preemptor was not bound"; }
events default | python3 -c '
import json, sys
ev = [e for e in json.load(sys.stdin)["items"]
      if e["reason"] == "Preempted" and e["regarding"]["name"] == "victim-0"]
assert ev, "no Preempted Event"
print("preempted: %s" % ev[0]["note"])' || fail "Preempted Event"

# Placement constraints read from the cluster: four serving pods spread over
# cubes (DoNotSchedule, maxSkew 1) and repelling each other per host land in
# four cubes; a gated pod waits for its gate.
for i in 0 1 2 3; do
	cat <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: serve-$i, labels: {app: serve}}
spec:
  schedulerName: podkernel
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
  topologySpreadConstraints:
  - {maxSkew: 1, topologyKey: topology.podkernel.dev/cube, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: serve}}}
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - {labelSelector: {matchLabels: {app: serve}}, topologyKey: kubernetes.io/hostname}
EOF
done > "$WORK/serve.yaml"
gated_pod() { # GATES (a YAML list)
	cat > "$WORK/gated.yaml" <<EOF
apiVersion: v1
kind: Pod
metadata: {name: gated}
spec:
  schedulerName: podkernel
  schedulingGates: $1
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
EOF
	podctl apply -f "$WORK/gated.yaml" > /dev/null || fail "apply gated.yaml ($1)"
}
podctl apply -f "$WORK/serve.yaml" > /dev/null || fail "apply serve.yaml"
gated_pod '[{name: example.com/admission}]'
serving_bound() {
	for i in 0 1 2 3; do [ -n "$(bound_to serve-$i)" ] || return 1; done
}
wait_for 20 serving_bound || { attach_dump; fail "the serving pods were not bound"; }
for i in 0 1 2 3; do bound_to serve-$i; done > "$WORK/serve-hosts"
cubes=$(python3 -c '
import json, sys
nodes = {n["metadata"]["name"]: n["metadata"]["labels"] for n in json.load(open(sys.argv[1]))["items"]}
hosts = open(sys.argv[2]).read().split()
print(len({nodes[h]["topology.podkernel.dev/cube"] for h in hosts}), len(set(hosts)))
' "$WORK/board-nodes.json" "$WORK/serve-hosts") || fail "reading the serving placement"
[ "$cubes" = "4 4" ] || { attach_dump; fail "serving pods: (cubes, hosts) = ($cubes), want 4 4"; }
gated_told() {
	podctl get pod gated -o json | python3 -c '
import json, sys
c = [c for c in json.load(sys.stdin).get("status", {}).get("conditions", []) if c["type"] == "PodScheduled"]
sys.exit(0 if c and c[0]["reason"] == "SchedulingGated" else 1)'
}
wait_for 20 gated_told || { attach_dump; fail "the gated pod was not told SchedulingGated"; }
[ -z "$(bound_to gated)" ] || fail "a pod with a scheduling gate was bound"
gated_pod '[]'
gated_bound() { [ -n "$(bound_to gated)" ]; }
wait_for 20 gated_bound || { attach_dump; fail "the pod was not bound once its gate was removed"; }

# Volumes read from the cluster: a WaitForFirstConsumer claim is patched to
# the local volume whose node its pod gets (spec.volumeName), another is given
# its pod's node as volume.kubernetes.io/selected-node for its provisioner.
cat > "$WORK/volumes.yaml" <<'EOF'
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast}
provisioner: csi.example.com
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-h100}
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: local
  local: {path: /mnt/disk}
  nodeAffinity:
    required:
      nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [tpu-ss0-h100]}]}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: local-data}
spec: {accessModes: [ReadWriteOnce], storageClassName: local, resources: {requests: {storage: 1Gi}}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: fast-data}
spec: {accessModes: [ReadWriteOnce], storageClassName: fast, resources: {requests: {storage: 1Gi}}}
---
apiVersion: v1
kind: Pod
metadata: {name: uses-local}
spec:
  schedulerName: podkernel
  volumes: [{name: d, persistentVolumeClaim: {claimName: local-data}}]
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: uses-fast}
spec:
  schedulerName: podkernel
  volumes: [{name: d, persistentVolumeClaim: {claimName: fast-data}}]
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
EOF
podctl apply -f "$WORK/volumes.yaml" > /dev/null || fail "apply volumes.yaml"
claim_field() { # CLAIM: "volumeName selectedNode"
	podctl get pvc "$1" -o json | python3 -c '
import json, sys
o = json.load(sys.stdin)
print(o["spec"].get("volumeName", "-"),
      o["metadata"].get("annotations", {}).get("volume.kubernetes.io/selected-node", "-"))'
}
volumes_bound() { [ -n "$(bound_to uses-local)" ] && [ -n "$(bound_to uses-fast)" ]; }
wait_for 20 volumes_bound || { attach_dump; fail "the pods with volumes were not bound"; }
[ "$(bound_to uses-local)" = tpu-ss0-h100 ] || fail "uses-local on $(bound_to uses-local)"
[ "$(claim_field local-data)" = "pv-h100 -" ] || fail "local-data: $(claim_field local-data)"
[ "$(claim_field fast-data)" = "- $(bound_to uses-fast)" ] || fail "fast-data: $(claim_field fast-data)"

# SIGTERM: a clean stop.
kill -TERM "$ATTACH_PID_a"
rc=0
wait "$ATTACH_PID_a" || rc=$?
[ "$rc" = 0 ] || { tail -n 40 "$WORK/attach-a.log" >&2; fail "attached podkerneld exited with $rc"; }
echo "PASS: attach mode"
