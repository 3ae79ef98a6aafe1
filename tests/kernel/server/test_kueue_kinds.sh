#!/bin/sh
# WorkloadPriorityClass (kueue.x-k8s.io/v1beta2), served by standalone
# podkerneld to the real kubectl: discovery lists it cluster-scoped, Kueue's
# sample is created and read back, a missing value is refused with its field
# path, an unknown field by kubectl's strict validation, and `kubectl
# explain` shows its fields.
. "$PODKERNEL_SRC/tests/kernel/server/lib.sh"
need kubectl
need curl

pk_start "$WORK/data"
pk_kubeconfig_open "$WORK/kubeconfig"
k() { kubectl --request-timeout=20s "$@"; }

k api-resources >"$WORK/res" 2>&1 || fail "api-resources: $(cat "$WORK/res")"
grep -q '^workloadpriorityclasses  *kueue.x-k8s.io/v1beta2  *false  *WorkloadPriorityClass' \
	"$WORK/res" || fail "api-resources: $(grep -i priority "$WORK/res")"

cat >"$WORK/wpc.yaml" <<'Y'
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: sample-priority}
value: 10000
description: "Sample priority"
Y
k apply --validate=strict -f "$WORK/wpc.yaml" >"$WORK/out" 2>&1 || fail "apply: $(cat "$WORK/out")"
got=$(k get workloadpriorityclass sample-priority -o jsonpath='{.value} {.description}')
[ "$got" = "10000 Sample priority" ] || fail "as stored: $got"

sed 's/sample-priority/no-value/; /^value:/d' "$WORK/wpc.yaml" | k apply -f - >"$WORK/out" 2>&1 &&
	fail "a class without value was accepted"
grep -q 'value: Required value' "$WORK/out" || fail "no field path: $(cat "$WORK/out")"

sed 's/sample-priority/typo/; s/^value:/valeu: 1\nvalue:/' "$WORK/wpc.yaml" |
	k apply --validate=strict -f - >"$WORK/out" 2>&1 && fail "strict accepted valeu"
grep -q 'unknown field "valeu"' "$WORK/out" || fail "strict: $(cat "$WORK/out")"

k explain workloadpriorityclasses >"$WORK/out" 2>&1 && grep -q 'value.*<integer>' "$WORK/out" &&
	grep -q 'independent of their pods' "$WORK/out" || fail "explain: $(cat "$WORK/out")"
echo "test_kueue_kinds: ok"
