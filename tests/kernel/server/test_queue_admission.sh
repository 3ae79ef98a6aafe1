#!/bin/sh
# Only the queue controller admits a queued workload: a user's kubectl
# (which may write anything else) may not add, change or remove the admission
# annotation queue.podkernel.dev/admission, resume a suspended queued Job,
# or remove or move its queue name while admitted; other updates of the
# same Job pass, and the controller's own admission still happens.  Then
# what an operator sees: `podctl queue` (usage against quota, the pending Job
# with its position and reason) and Kueue's metrics in /metrics.

. "$PODKERNEL_SRC/tests/kernel/server/lib.sh"
need kubectl
pk_start "$WORK/data" --write-kubeconfig "$WORK/kubeconfig" \
	--simulate-board "$PODKERNEL_SRC/boards/gpu-cluster.yaml"
pk_kubeconfig "$WORK/kubeconfig"
k() { timeout 20 kubectl --request-timeout=10s "$@"; }
# refused WHAT MESSAGE CMD...: the command fails and says MESSAGE.
refused() {
	what=$1 msg=$2; shift 2
	k "$@" >"$WORK/out" 2>&1 && fail "$what: accepted"
	grep -q "$msg" "$WORK/out" || fail "$what: $(cat "$WORK/out")"
}
cat >"$WORK/q.yaml" <<'Y'
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default-flavor
      resources: [{name: cpu, nominalQuota: 4}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: default}
spec: {clusterQueue: cq}
Y
job() {
	cat <<Y
apiVersion: batch/v1
kind: Job
metadata: {name: $1, labels: {kueue.x-k8s.io/queue-name: lq}}
spec:
  suspend: true
  template:
    spec:
      containers: [{name: c, image: x, resources: {requests: {cpu: "$2"}}}]
Y
}
k apply -f "$WORK/q.yaml" >/dev/null || fail "queue objects"
job big 8 | k apply -f - >/dev/null || fail "job big"
A=queue.podkernel.dev/admission
# pending (8 cpu over a quota of 4): the user cannot admit it
refused "annotate" "metadata.annotations\[$A\]: Forbidden" annotate job big "$A=cq/default-flavor"
refused "resume" "spec.suspend: Forbidden" patch job big -p '{"spec":{"suspend":false}}'
job big 8 | sed "s|labels:|annotations: {$A: cq/default-flavor}, labels:|" >"$WORK/big.yaml"
refused "server-side apply" "Forbidden" apply --server-side --force-conflicts -f "$WORK/big.yaml"
refused "unlabel" "metadata.labels\[kueue.x-k8s.io/queue-name\]: Forbidden" label job big kueue.x-k8s.io/queue-name-
k label job big team=a >/dev/null || fail "an unrelated label was refused"
k get job big -o jsonpath='{.metadata.annotations}' | grep -q "$A" && fail "big got admitted"
# the controller admits what fits; its admission is then the user's to keep
job small 2 | k apply -f - >/dev/null || fail "job small"
i=0
until [ "$(k get job small -o jsonpath='{.spec.suspend}')" = false ]; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "small was not admitted"; sleep 0.1
done
[ "$(k get job small -o jsonpath="{.metadata.annotations['queue\.podkernel\.dev/admission']}")" = cq/default-flavor ] ||
	fail "small's admission: $(k get job small -o yaml)"
refused "re-annotate" "Forbidden" annotate --overwrite job small "$A=cq/other"
refused "de-annotate" "Forbidden" annotate job small "$A-"
refused "requeue" "may not change while the workload is admitted" label --overwrite job small kueue.x-k8s.io/queue-name=other
# suspended by its user, it is the controller that admits it again (as Kueue starts
# a suspended Job whose Workload is admitted)
k patch job small -p '{"spec":{"suspend":true}}' >/dev/null || fail "suspending small was refused"
i=0
until [ "$(k get job small -o jsonpath='{.spec.suspend}')" = false ]; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "small was not admitted again"; sleep 0.1
done
need curl
i=0 # the queue's status follows the admission within the same pass
until [ "$(k get clusterqueue cq -o jsonpath='{.status.admittedWorkloads}/{.status.pendingWorkloads}')" = 1/1 ]; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "cq's status: $(k get clusterqueue cq -o yaml)"; sleep 0.1
done
out=$("$PODKERNEL_BIN/podctl" queue) || fail "podctl queue: $out"
echo "$out" | grep -q '^cq  *-  *1  *1  *default-flavor  *cpu  *2/4  *0$' || fail "podctl queue, cq: $out"
echo "$out" | grep -q '^default/lq  *cq  *1  *1$' || fail "podctl queue, lq: $out"
echo "$out" | grep -q '^Job default/big  *cq  *1  insufficient unused quota for cpu in flavor default-flavor of ClusterQueue cq, 4 more needed$' ||
	fail "podctl queue, pending: $out"
"$PODKERNEL_BIN/podctl" queue extra >/dev/null 2>&1; [ $? = 2 ] || fail "podctl queue extra: not exit 2"
curl -s "http://127.0.0.1:$PK_PORT/metrics" >"$WORK/metrics"
for want in 'kueue_pending_workloads{cluster_queue="cq",status="active"} 1' \
	'kueue_admitted_active_workloads{cluster_queue="cq"} 1' \
	'kueue_cluster_queue_resource_usage{cohort="",cluster_queue="cq",flavor="default-flavor",resource="cpu"} 2' \
	'kueue_cluster_queue_nominal_quota{cohort="",cluster_queue="cq",flavor="default-flavor",resource="cpu"} 4' \
	'kueue_admission_wait_time_seconds_count{cluster_queue="cq"} 2'; do
	grep -qF "$want" "$WORK/metrics" || fail "metrics: no $want"
done
pk_stop
