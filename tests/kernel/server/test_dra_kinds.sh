#!/bin/sh
# The resource.k8s.io/v1 kinds served by podkerneld to the real kubectl:
# discovery (kubectl api-resources), create and get of a DeviceClass, a
# ResourceSlice, a ResourceClaimTemplate and a ResourceClaim, the claim's
# status subresource (a main update keeps status, a status patch writes it,
# a stale resourceVersion conflicts), an unknown field refused by kubectl's
# strict validation, `kubectl explain`, a protobuf ResourceSlice and
# ResourceClaim, and a claim refused with its field path.
. "$PODKERNEL_SRC/tests/kernel/server/lib.sh"
need kubectl
need curl

pk_start "$WORK/data"
pk_kubeconfig_open "$WORK/kubeconfig"
k() { kubectl --request-timeout=20s "$@"; }

k api-resources --api-group=resource.k8s.io >"$WORK/res" 2>&1 || fail "api-resources: $(cat "$WORK/res")"
for r in deviceclasses resourceclaims resourceclaimtemplates resourceslices; do
	grep -q "^$r " "$WORK/res" || fail "api-resources lacks $r: $(cat "$WORK/res")"
done
grep '^resourceclaims ' "$WORK/res" | grep -q ' true ' || fail "resourceclaims not namespaced"
grep '^resourceslices ' "$WORK/res" | grep -q ' false ' || fail "resourceslices namespaced"

k apply -f "$PODKERNEL_SRC/examples/dra/deviceclasses.yaml" >/dev/null || fail "apply classes"
cat >"$WORK/objs.yaml" <<'Y'
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpu.example.com}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 0, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    attributes: {index: {int: 0}, type: {string: gpu}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu}
spec:
  spec:
    devices:
      requests:
      - {name: gpu, exactly: {deviceClassName: gpu.example.com}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c1}
spec:
  devices:
    requests:
    - {name: gpu, exactly: {deviceClassName: gpu.example.com}}
Y
k apply -f "$WORK/objs.yaml" >"$WORK/out" 2>&1 || fail "apply: $(cat "$WORK/out")"
k get resourceslices,resourceclaimtemplates,resourceclaims,deviceclasses >"$WORK/out" 2>&1 ||
	fail "get: $(cat "$WORK/out")"
for n in n1-gpu.example.com one-gpu c1 gpu.example.com; do
	grep -q "/$n " "$WORK/out" || fail "get lacks $n: $(cat "$WORK/out")"
done

# status subresource: a status patch writes it, a main update keeps it
k patch resourceclaim c1 --subresource=status --type=merge -p \
	'{"status":{"allocation":{"devices":{"results":[{"request":"gpu","driver":"gpu.example.com","pool":"n1","device":"gpu-0"}]}},"reservedFor":[{"resource":"pods","name":"p","uid":"u1"}]}}' \
	>"$WORK/out" 2>&1 || fail "status patch: $(cat "$WORK/out")"
k label resourceclaim c1 team=a >/dev/null || fail "label"
k get resourceclaim c1 -o jsonpath='{.status.allocation.devices.results[0].device}' >"$WORK/out"
[ "$(cat "$WORK/out")" = gpu-0 ] || fail "status lost by a main update: $(cat "$WORK/out")"
k patch resourceclaim c1 --type=merge -p '{"status":{"reservedFor":[]}}' >/dev/null 2>&1
k get resourceclaim c1 -o jsonpath='{.status.reservedFor[0].name}' >"$WORK/out"
[ "$(cat "$WORK/out")" = p ] || fail "a main patch changed status"

# optimistic concurrency on the status subresource
PK_URL="http://127.0.0.1:$PK_PORT"
C=/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/c1
expect 200 GET $C
sed 's/"resourceVersion":"[0-9]*"/"resourceVersion":"1"/' "$WORK/body" >"$WORK/stale.json"
expect 409 PUT $C/status -H "Content-Type: application/json" --data-binary @"$WORK/stale.json"

# kubectl --validate=strict (its default): an unknown field is 400 with its path
cat >"$WORK/typo.yaml" <<'Y'
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: typo}
spec:
  devices:
    requests:
    - {name: gpu, exactly: {deviceClassName: gpu.example.com, countt: 1}}
Y
k apply --validate=strict -f "$WORK/typo.yaml" >"$WORK/out" 2>&1 && fail "strict accepted countt"
grep -q 'BadRequest.*strict decoding error: unknown field "spec.devices.requests\[0\].exactly.countt"' \
	"$WORK/out" || fail "strict: $(cat "$WORK/out")"
k get resourceclaim typo >/dev/null 2>&1 && fail "a Strict refusal created the claim"

# kubectl explain reads the OpenAPI schema made from the same message
k explain resourceclaims.spec.devices >"$WORK/out" 2>&1 &&
	grep -q 'requests.*<\[\]DeviceRequest>' "$WORK/out" && grep -q 'constraints' "$WORK/out" ||
	fail "explain resourceclaims.spec.devices: $(cat "$WORK/out")"
k explain resourceslices.spec.devices.attributes >"$WORK/out" 2>&1 && grep -q 'int.*<integer>' "$WORK/out" ||
	fail "explain slice attributes: $(cat "$WORK/out")"

# protobuf bodies (client-go's typed clients, DRA drivers publishing slices)
SEEDS="$PODKERNEL_SRC/tests/fuzz/corpus/fuzz_proto"
expect 201 POST /apis/resource.k8s.io/v1/resourceslices \
	-H 'Content-Type: application/vnd.kubernetes.protobuf' --data-binary @"$SEEDS/resourceslice"
got=$(k get resourceslice n2-gpu.example.com -o jsonpath='{.spec.nodeName} {.spec.pool.generation} {.spec.devices[0].attributes.index.int} {.spec.devices[0].attributes.type.string} {.spec.devices[0].capacity.memory.value}')
[ "$got" = "n2 0 0 gpu 80Gi" ] || fail "protobuf slice as stored: $got"
expect 201 POST /apis/resource.k8s.io/v1/namespaces/default/resourceclaims \
	-H 'Content-Type: application/vnd.kubernetes.protobuf' --data-binary @"$SEEDS/resourceclaim"
got=$(k get resourceclaim proto-claim -o jsonpath='{.spec.devices.requests[0].exactly.deviceClassName} {.spec.devices.requests[0].exactly.count}')
[ "$got" = "gpu.example.com 1" ] || fail "protobuf claim as stored: $got"

# refused with kube-apiserver's field path
cat >"$WORK/bad.yaml" <<'Y'
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: bad}
spec:
  devices:
    requests:
    - {name: gpu, exactly: {deviceClassName: gpu.example.com, count: 0}}
Y
k apply -f "$WORK/bad.yaml" >"$WORK/out" 2>&1 && fail "a count of 0 was accepted"
grep -q 'spec.devices.requests\[0\].exactly.count: Invalid value: 0: must be greater than zero' \
	"$WORK/out" || fail "no field path: $(cat "$WORK/out")"
pk_stop
echo "test_dra_kinds: ok"
