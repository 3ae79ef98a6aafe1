#!/bin/sh
# Kueue's API in two versions, as Kueue's CRDs serve it: kueue.x-k8s.io/v1beta1
# beside v1beta2 (stored), to the real kubectl and over HTTP.  Discovery lists
# both, v1beta2 preferred; a ClusterQueue created in v1beta1 (spec.cohort) is
# read in v1beta2 (spec.cohortName) and back; a v1beta1 list and watch carry
# v1beta1 objects and field names (a LocalQueue's status.flavorUsage); a merge
# patch in v1beta1 names v1beta1 fields; strict validation knows each
# version's fields; a field podkernel refuses is refused by its path in the
# version the client wrote (spec.admissionChecks, v1beta1 only), an invalid
# renamed one by its v1beta1 path; flavorFungibility's Borrow and Preempt are
# MayStopSearch; `kubectl explain` reads each version.
. "$PODKERNEL_SRC/tests/kernel/server/lib.sh"
need kubectl
need curl

pk_start "$WORK/data"
pk_kubeconfig_open "$WORK/kubeconfig"
k() { kubectl --request-timeout=20s "$@"; }
B="http://127.0.0.1:$PK_PORT/apis/kueue.x-k8s.io"

# discovery: both versions, v1beta2 preferred
k api-versions >"$WORK/out" 2>&1 || fail "api-versions: $(cat "$WORK/out")"
grep -qx 'kueue.x-k8s.io/v1beta1' "$WORK/out" && grep -qx 'kueue.x-k8s.io/v1beta2' "$WORK/out" ||
	fail "api-versions: $(grep kueue "$WORK/out")"
k api-resources >"$WORK/out" 2>&1 || fail "api-resources: $(cat "$WORK/out")"
grep -q '^clusterqueues  *cq  *kueue.x-k8s.io/v1beta2 ' "$WORK/out" ||
	fail "preferred: $(grep clusterqueues "$WORK/out")"
curl -s "$B/v1beta1" >"$WORK/out"
for r in resourceflavors clusterqueues localqueues cohorts workloadpriorityclasses topologies; do
	grep -q "\"name\":\"$r\"" "$WORK/out" || fail "v1beta1 lacks $r: $(cat "$WORK/out")"
done

# create in v1beta1, read in v1beta2 and back
cat >"$WORK/cq.yaml" <<'Y'
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: team-a}
spec:
  cohort: research
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default-flavor
      resources: [{name: cpu, nominalQuota: 8, borrowingLimit: 4}]
Y
k create --validate=strict -f "$WORK/cq.yaml" >"$WORK/out" 2>&1 || fail "create: $(cat "$WORK/out")"
got=$(k get clusterqueues.v1beta2.kueue.x-k8s.io team-a \
	-o jsonpath='{.apiVersion} {.spec.cohortName}/{.spec.cohort}')
[ "$got" = "kueue.x-k8s.io/v1beta2 research/" ] || fail "in v1beta2: $got"
got=$(k get clusterqueues.v1beta1.kueue.x-k8s.io team-a \
	-o jsonpath='{.apiVersion} {.spec.cohort}/{.spec.cohortName}')
[ "$got" = "kueue.x-k8s.io/v1beta1 research/" ] || fail "in v1beta1: $got"
# a list in v1beta1: its kind's list, each item converted
curl -s "$B/v1beta1/clusterqueues" >"$WORK/out"
grep -q '"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"ClusterQueueList"\|"kind":"ClusterQueueList","apiVersion":"kueue.x-k8s.io/v1beta1"' "$WORK/out" &&
	grep -q '"cohort":"research"' "$WORK/out" && ! grep -q '"cohortName":"' "$WORK/out" ||
	fail "v1beta1 list: $(cat "$WORK/out")"
# a merge patch in v1beta1 names v1beta1's field
curl -s -X PATCH -H 'Content-Type: application/merge-patch+json' \
	-d '{"spec":{"cohort":"other"}}' "$B/v1beta1/clusterqueues/team-a" >"$WORK/out"
grep -q '"cohort":"other"' "$WORK/out" || fail "patch: $(cat "$WORK/out")"
got=$(k get clusterqueues.v1beta2.kueue.x-k8s.io team-a -o jsonpath='{.spec.cohortName}')
[ "$got" = other ] || fail "patched: $got"

# a watch in v1beta1 sees v1beta1 objects: a LocalQueue's status.flavorUsage
timeout 10 curl -sN "$B/v1beta1/namespaces/default/localqueues?watch=1&timeoutSeconds=5" \
	>"$WORK/watch" 2>/dev/null &
wpid=$!
sleep 0.5
cat >"$WORK/lq.yaml" <<'Y'
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: user-queue, namespace: default}
spec: {clusterQueue: team-a}
Y
k apply --validate=strict -f "$WORK/lq.yaml" >"$WORK/out" 2>&1 || fail "lq: $(cat "$WORK/out")"
i=0
until grep -q '"flavorUsage"' "$WORK/watch"; do
	[ $i -lt 100 ] || fail "watch: $(cat "$WORK/watch")"
	sleep 0.1
	i=$((i + 1))
done
wait $wpid
grep -q '"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"LocalQueue"' "$WORK/watch" &&
	! grep -q '"flavorsUsage"' "$WORK/watch" ||
	fail "watch in v1beta1 sent v1beta2: $(cat "$WORK/watch")"
got=$(k get localqueues.v1beta2.kueue.x-k8s.io user-queue -o jsonpath='{.status.flavorsUsage}')
[ -n "$got" ] || fail "no v1beta2 flavorsUsage"

# strict validation by version: v1beta2's name is unknown in v1beta1, and back
sed 's/name: team-a/name: team-b/; s/cohort:/cohortName:/' "$WORK/cq.yaml" |
	k create --validate=strict -f - >"$WORK/out" 2>&1 && fail "v1beta1 took cohortName"
grep -q 'unknown field "spec.cohortName"' "$WORK/out" || fail "strict v1beta1: $(cat "$WORK/out")"
sed 's/name: team-a/name: team-b/; s|/v1beta1|/v1beta2|' "$WORK/cq.yaml" |
	k create --validate=strict -f - >"$WORK/out" 2>&1 && fail "v1beta2 took cohort"
grep -q 'unknown field "spec.cohort"' "$WORK/out" || fail "strict v1beta2: $(cat "$WORK/out")"

# refused by its v1beta1 path: admission checks; an invalid cohort by its own path
sed 's/name: team-a/name: team-c/; s/^  cohort: research/  admissionChecks: [prov]/' \
	"$WORK/cq.yaml" >"$WORK/ac.yaml"
sed -i '/borrowingLimit/s/, borrowingLimit: 4//' "$WORK/ac.yaml"
k create --validate=strict -f "$WORK/ac.yaml" >"$WORK/out" 2>&1 && fail "admissionChecks accepted"
grep -q 'spec.admissionChecks: Forbidden: not implemented' "$WORK/out" &&
	! grep -q admissionChecksStrategy "$WORK/out" || fail "admissionChecks: $(cat "$WORK/out")"
sed 's/name: team-a/name: team-d/; s/cohort: research/cohort: Not_A_Name/' "$WORK/cq.yaml" |
	k create -f - >"$WORK/out" 2>&1 && fail "a bad cohort name was accepted"
grep -q 'spec.cohort: Invalid value' "$WORK/out" && ! grep -q cohortName "$WORK/out" ||
	fail "cohort path: $(cat "$WORK/out")"

# v1beta1's flavorFungibility values (Kueue's conversion): Preempt and Borrow are
# stored as MayStopSearch, read back so in v1beta1; Preempt is refused in v1beta2
sed 's/name: team-a/name: team-e/; s/^  cohort: research/  cohort: research\n  flavorFungibility: {whenCanBorrow: Borrow, whenCanPreempt: Preempt}/' \
	"$WORK/cq.yaml" >"$WORK/ff.yaml"
k create --validate=strict -f "$WORK/ff.yaml" >"$WORK/out" 2>&1 || fail "fungibility: $(cat "$WORK/out")"
got=$(k get clusterqueues.v1beta2.kueue.x-k8s.io team-e \
	-o jsonpath='{.spec.flavorFungibility.whenCanBorrow}/{.spec.flavorFungibility.whenCanPreempt}')
[ "$got" = "MayStopSearch/MayStopSearch" ] || fail "fungibility in v1beta2: $got"
got=$(k get clusterqueues.v1beta1.kueue.x-k8s.io team-e \
	-o jsonpath='{.spec.flavorFungibility.whenCanPreempt}')
[ "$got" = "MayStopSearch" ] || fail "fungibility in v1beta1: $got"
sed 's/name: team-e/name: team-f/; s|/v1beta1|/v1beta2|; s/cohort:/cohortName:/' "$WORK/ff.yaml" |
	k create -f - >"$WORK/out" 2>&1 && fail "v1beta2 took Borrow"
grep -q 'spec.flavorFungibility.whenCanBorrow: Unsupported value: "Borrow"' "$WORK/out" ||
	fail "fungibility in v1beta2: $(cat "$WORK/out")"

# OpenAPI: each version its own fields
k explain clusterqueues.spec --api-version=kueue.x-k8s.io/v1beta1 >"$WORK/out" 2>&1 &&
	grep -q '^  cohort	*<string>' "$WORK/out" && grep -q 'admissionChecks	*<\[\]string>' "$WORK/out" ||
	fail "explain v1beta1: $(cat "$WORK/out")"
k explain clusterqueues.spec --api-version=kueue.x-k8s.io/v1beta2 >"$WORK/out" 2>&1 &&
	grep -q '^  cohortName	*<string>' "$WORK/out" || fail "explain v1beta2: $(cat "$WORK/out")"
pk_stop
echo "test_kueue_versions: ok"
