#!/bin/sh
# The storage kinds served by standalone podkerneld to the real kubectl and
# used by its scheduler: discovery, a claim refused with its field path, an
# unknown field refused by kubectl's strict validation, `kubectl explain`, a
# protobuf claim, and volume binding end to end.  A pod whose claim does not
# exist waits with a message naming the claim and binds once it is created; a
# WaitForFirstConsumer claim is bound (spec.volumeName) to the local volume
# whose node the pod gets, in the binding's write batch; a claim of a
# provisioning class gets the pod's node as volume.kubernetes.io/selected-node.
. "$PODKERNEL_SRC/tests/kernel/server/lib.sh"
need kubectl
need curl

pk_start "$WORK/data"
pk_kubeconfig_open "$WORK/kubeconfig"
k() { kubectl --request-timeout=20s "$@"; }

k api-resources >"$WORK/res" 2>&1 || fail "api-resources: $(cat "$WORK/res")"
for r in persistentvolumeclaims persistentvolumes storageclasses csinodes; do
	grep -q "^$r " "$WORK/res" || fail "api-resources lacks $r"
done

cat >"$WORK/bad.yaml" <<'Y'
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: bad}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: "0"}}}
Y
k apply -f "$WORK/bad.yaml" >"$WORK/out" 2>&1 && fail "a request of 0 was accepted"
grep -q 'spec.resources\[storage\]: Invalid value: "0": must be greater than zero' "$WORK/out" ||
	fail "no field path: $(cat "$WORK/out")"

# kubectl --validate=strict (its default): an unknown field is 400 with its
# path and nothing is created; a good claim passes without a warning
sed 's/name: bad}/name: typo}/; s/storage: "0"/storage: 1Gi/; s/accessModes:/storageClasName: x, accessModes:/' \
	"$WORK/bad.yaml" >"$WORK/typo.yaml"
k apply --validate=strict -f "$WORK/typo.yaml" >"$WORK/out" 2>&1 && fail "strict accepted storageClasName"
grep -q 'BadRequest.*strict decoding error: unknown field "spec.storageClasName"' "$WORK/out" ||
	fail "strict: $(cat "$WORK/out")"
k get pvc typo >/dev/null 2>&1 && fail "a Strict refusal created the claim"
sed 's/storageClasName: x, //' "$WORK/typo.yaml" | k apply --validate=strict -f - >"$WORK/out" 2>&1 ||
	fail "apply: $(cat "$WORK/out")"
grep -q Warning "$WORK/out" && fail "a known claim warned: $(cat "$WORK/out")"

# kubectl explain reads the OpenAPI schema made from the same message
k explain persistentvolumeclaims.spec >"$WORK/out" 2>&1 &&
	grep -q 'storageClassName.*<string>' "$WORK/out" && grep -q 'accessModes.*<\[\]string>' "$WORK/out" ||
	fail "explain pvc.spec: $(cat "$WORK/out")"
k explain persistentvolumes.spec.local >"$WORK/out" 2>&1 && grep -q 'path.*<string>' "$WORK/out" ||
	fail "explain pv.spec.local: $(cat "$WORK/out")"

# a protobuf PersistentVolumeClaim (client-go's typed clients send them)
PK_URL="http://127.0.0.1:$PK_PORT"
expect 201 POST /api/v1/namespaces/default/persistentvolumeclaims \
	-H 'Content-Type: application/vnd.kubernetes.protobuf' \
	--data-binary @"$PODKERNEL_SRC/tests/fuzz/corpus/fuzz_proto/persistentvolumeclaim"
got=$(k get pvc proto-claim -o jsonpath='{.spec.accessModes[0]} {.spec.resources.requests.storage} {.spec.storageClassName}')
[ "$got" = "ReadWriteOnce 1Gi fast" ] || fail "protobuf claim as stored: $got"

cat >"$WORK/cluster.yaml" <<'Y'
apiVersion: v1
kind: Node
metadata: {name: h0, labels: {kubernetes.io/hostname: h0}}
status: {allocatable: {cpu: "8", pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: h1, labels: {kubernetes.io/hostname: h1}}
status: {allocatable: {cpu: "8", pods: "110"}}
---
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
metadata: {name: pv-h1}
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: local
  local: {path: /mnt/disk}
  nodeAffinity:
    required:
      nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [h1]}]}]
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
  volumes: [{name: d, persistentVolumeClaim: {claimName: local-data}}]
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: uses-fast}
spec:
  volumes: [{name: d, persistentVolumeClaim: {claimName: fast-data}}]
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: waits}
spec:
  volumes: [{name: d, persistentVolumeClaim: {claimName: later}}]
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
Y
k apply -f "$WORK/cluster.yaml" >"$WORK/out" 2>&1 || fail "apply: $(cat "$WORK/out")"

# jsonpath QUERY KIND NAME EXPECTED: wait up to 10 s for the value
waitfor() {
	i=0
	while [ $i -lt 100 ]; do
		[ "$(k get "$2" "$3" -o jsonpath="$1" 2>/dev/null)" = "$4" ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	fail "$2 $3 $1: $(k get "$2" "$3" -o jsonpath="$1" 2>&1), expected $4"
}
# wait up to 10 s for pod $1 to be bound; print its node
boundnode() {
	i=0
	while [ $i -lt 100 ]; do
		n=$(k get pod "$1" -o jsonpath='{.spec.nodeName}' 2>/dev/null)
		[ -n "$n" ] && { echo "$n"; return 0; }
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
waitfor '{.spec.nodeName}' pod uses-local h1
waitfor '{.spec.volumeName}' pvc local-data pv-h1
node=$(boundnode uses-fast) || fail "uses-fast not bound"
waitfor '{.metadata.annotations.volume\.kubernetes\.io/selected-node}' pvc fast-data "$node"
waitfor '{.status.conditions[?(@.type=="PodScheduled")].message}' pod waits \
	'Pod default/waits: spec.volumes[0].persistentVolumeClaim: persistentvolumeclaim "later" not found'
[ -z "$(k get pod waits -o jsonpath='{.spec.nodeName}')" ] || fail "waits bound without its claim"
cat >"$WORK/later.yaml" <<'Y'
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: later}
spec: {accessModes: [ReadWriteOnce], storageClassName: fast, resources: {requests: {storage: 1Gi}}}
Y
k apply -f "$WORK/later.yaml" >/dev/null || fail "apply later"
node=$(boundnode waits) || fail "waits not bound once its claim came"
waitfor '{.metadata.annotations.volume\.kubernetes\.io/selected-node}' pvc later "$node"
pk_stop
echo "test_storage_kinds: ok"
