#!/bin/sh
# Attach mode allocates device claims as kube-scheduler's DRA plugin does:
# the stand-in cluster (podkerneld --no-scheduling) serves DeviceClasses,
# ResourceSlices and ResourceClaims, the attached podkerneld mirrors them,
# and a gang of two pods sharing one IMEX channel claim (a device published
# for rack r0 through a nodeSelector), each with its own GPU claim, is bound
# in rack r0: the shared claim allocated once and reserved for both pods,
# each GPU claim on its pod's node, every claim's status written (status
# subresource, resourceVersion precondition) before the bindings.  A pod
# whose claim does not exist stays pending with a message naming it.
set -eu
. "$PODKERNEL_SRC/tests/e2e/lib.sh"
. "$PODKERNEL_SRC/tests/e2e/attach_lib.sh"
need_python
need_tool curl
trap 'attach_dump' USR1

e2e_setup
attach_cluster_start
{
	for n in a0:r0 a1:r0 b0:r1; do
		cat <<EOF
---
apiVersion: v1
kind: Node
metadata: {name: ${n%:*}, labels: {kubernetes.io/hostname: ${n%:*}, rack: ${n#*:}}}
status: {allocatable: {cpu: "8", memory: 8Gi, pods: "110"}, capacity: {cpu: "8", memory: 8Gi, pods: "110"}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: ${n%:*}-gpu.example.com}
spec:
  driver: gpu.example.com
  nodeName: ${n%:*}
  pool: {name: ${n%:*}, generation: 0, resourceSliceCount: 1}
  devices:
  - {name: gpu-0, attributes: {index: {int: 0}, type: {string: gpu}}}
EOF
	done
	cat <<'EOF'
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: r0-channels}
spec:
  driver: compute-domain.nvidia.com
  nodeSelector: {nodeSelectorTerms: [{matchExpressions: [{key: rack, operator: In, values: [r0]}]}]}
  pool: {name: r0, generation: 0, resourceSliceCount: 1}
  devices:
  - {name: channel-0, attributes: {type: {string: channel}, id: {int: 0}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: imex}
spec:
  devices:
    requests: [{name: channel, exactly: {deviceClassName: compute-domain-default-channel.nvidia.com}}]
---
apiVersion: scheduling.k8s.io/v1alpha3
kind: PodGroup
metadata: {name: g}
spec:
  schedulingPolicy: {gang: {minCount: 2}}
EOF
	for i in 0 1; do
		cat <<EOF
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: gpu-$i}
spec:
  devices:
    requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]
---
apiVersion: v1
kind: Pod
metadata: {name: g-$i}
spec:
  schedulerName: podkernel
  schedulingGroup: {podGroupName: g}
  resourceClaims: [{name: channel, resourceClaimName: imex}, {name: gpu, resourceClaimName: gpu-$i}]
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}, claims: [{name: channel}, {name: gpu}]}}]
EOF
	done
	cat <<'EOF'
---
apiVersion: v1
kind: Pod
metadata: {name: lonely}
spec:
  schedulerName: podkernel
  resourceClaims: [{name: gpu, resourceClaimName: nowhere}]
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
EOF
} > "$WORK/dra.yaml"
podctl apply -f "$PODKERNEL_SRC/examples/dra/deviceclasses.yaml" > /dev/null || fail "apply classes"
podctl apply -f "$WORK/dra.yaml" > "$WORK/apply.out" 2>&1 || fail "apply: $(cat "$WORK/apply.out")"

attach_start a
wait_for 20 curl -sf "http://127.0.0.1:$ATTACH_PORT_a/readyz" || { attach_dump; fail "never ready"; }
both_bound() { [ -n "$(bound_to g-0)" ] && [ -n "$(bound_to g-1)" ]; }
wait_for 30 both_bound || { attach_dump; fail "the gang was not bound"; }

for o in g-0 g-1 lonely; do podctl get pod "$o" -o json > "$WORK/$o.json"; done
for o in imex gpu-0 gpu-1; do podctl get resourceclaim "$o" -o json > "$WORK/$o.json"; done
python3 - "$WORK" <<'EOF' || { attach_dump; fail "claims"; }
import json, sys
w = sys.argv[1]
load = lambda n: json.load(open("%s/%s.json" % (w, n)))
pods = {n: load(n) for n in ("g-0", "g-1")}
rack = {"a0": "r0", "a1": "r0", "b0": "r1"}
for n, p in pods.items():
    assert rack[p["spec"]["nodeName"]] == "r0", (n, p["spec"]["nodeName"])
imex = load("imex")["status"]
res = imex["allocation"]["devices"]["results"]
assert [(r["driver"], r["device"]) for r in res] == [("compute-domain.nvidia.com", "channel-0")], res
assert "nodeSelector" in imex["allocation"], imex
got = sorted((r["name"], r["uid"]) for r in imex["reservedFor"])
assert got == sorted((n, p["metadata"]["uid"]) for n, p in pods.items()), got
for i in (0, 1):
    st = load("gpu-%d" % i)["status"]
    r = st["allocation"]["devices"]["results"]
    assert len(r) == 1 and r[0]["pool"] == pods["g-%d" % i]["spec"]["nodeName"], (i, st)
    assert [x["name"] for x in st["reservedFor"]] == ["g-%d" % i], st
lonely = load("lonely")
assert not lonely["spec"].get("nodeName"), lonely
msg = [c for c in lonely["status"]["conditions"] if c["type"] == "PodScheduled"][0]["message"]
assert "ResourceClaim default/nowhere not found" in msg, msg
print("attach dra: gang in rack r0, shared channel allocated once, GPU claims per node")
EOF
echo "test_attach_dra: ok"
