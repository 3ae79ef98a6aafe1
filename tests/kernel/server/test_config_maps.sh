#!/bin/sh
# ConfigMap (core v1), served by standalone podkerneld to the real kubectl:
# discovery lists it namespaced with its short name, `kubectl create
# configmap` (a typed command) makes one that reads back, data and
# binaryData, by the short name too, and takes a label; a key in both maps
# and immutable: true are refused with their field paths, an unknown field
# by kubectl's strict validation; `kubectl explain` shows its fields, and
# delete removes it.
. "$PODKERNEL_SRC/tests/kernel/server/lib.sh"
need kubectl
need curl

pk_start "$WORK/data"
pk_kubeconfig_open "$WORK/kubeconfig"
k() { kubectl --request-timeout=20s "$@"; }

k api-resources >"$WORK/res" 2>&1 || fail "api-resources: $(cat "$WORK/res")"
grep -q '^configmaps  *cm  *v1  *true  *ConfigMap' "$WORK/res" ||
	fail "api-resources: $(grep -i config "$WORK/res")"

printf '\377\376' >"$WORK/blob" # not UTF-8: kubectl sends it as binaryData
k create configmap app --from-literal=mode=fast --from-file=blob.bin="$WORK/blob" \
	>"$WORK/out" 2>&1 || fail "create: $(cat "$WORK/out")"
got=$(k get cm app -o jsonpath='{.data.mode} {.binaryData.blob\.bin}')
[ "$got" = "fast //4=" ] || fail "as stored: $got"
k get configmaps >"$WORK/out" 2>&1 && grep -q '^app ' "$WORK/out" || fail "list: $(cat "$WORK/out")"
k label configmap app tier=web >"$WORK/out" 2>&1 || fail "label: $(cat "$WORK/out")"
[ "$(k get cm app -o jsonpath='{.metadata.labels.tier}')" = web ] || fail "label not stored"

cat >"$WORK/both.yaml" <<'Y'
apiVersion: v1
kind: ConfigMap
metadata: {name: both}
data: {a: x}
binaryData: {a: aGk=}
Y
k apply -f "$WORK/both.yaml" >"$WORK/out" 2>&1 && fail "a key in both maps was accepted"
grep -q 'binaryData\[a\]: Invalid value: "a": duplicate of key present in data' "$WORK/out" ||
	fail "no field path: $(cat "$WORK/out")"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: frozen}\nimmutable: true\n' |
	k apply -f - >"$WORK/out" 2>&1 && fail "immutable: true was accepted"
grep -q 'immutable: Unsupported value: true' "$WORK/out" || fail "immutable: $(cat "$WORK/out")"

printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: typo}\ndta: {a: x}\n' |
	k apply --validate=strict -f - >"$WORK/out" 2>&1 && fail "strict accepted dta"
grep -q 'unknown field "dta"' "$WORK/out" || fail "strict: $(cat "$WORK/out")"

k explain configmaps >"$WORK/out" 2>&1 && grep -q 'binaryData.*<map\[string\]string>' "$WORK/out" &&
	grep -q 'Configuration data' "$WORK/out" || fail "explain: $(cat "$WORK/out")"

k delete configmap app >"$WORK/out" 2>&1 || fail "delete: $(cat "$WORK/out")"
k get cm app >"$WORK/out" 2>&1 && fail "app still there"
grep -q 'NotFound\|not found' "$WORK/out" || fail "after delete: $(cat "$WORK/out")"
echo "test_config_maps: ok"
