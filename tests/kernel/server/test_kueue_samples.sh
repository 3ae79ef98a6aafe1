#!/bin/sh
# Kueue's own sample manifests (tests/fixtures/kueue/), unchanged in the
# kueue.x-k8s.io/v1beta1 they are written in, applied with the real kubectl
# to standalone podkerneld as Kueue's documentation applies them: the single
# ClusterQueue setup and its sample Job (kubectl create, a generateName) is
# admitted and runs its 3 pods, and the ClusterQueue counts it; the
# topology-aware setup (Topology, a flavor with nodeLabels and topologyName)
# places its sample Job's 10 pods in one rack of the nodes labelled for it,
# as podset-required-topology asks; the Cohort page's quota example is
# admitted (spec.cohort stored as v1beta2's spec.cohortName), its tree of
# Cohorts refused by the field podkernel does not implement, by its path.
# kubectl apply is run twice: the second is a patch in v1beta1.
. "$PODKERNEL_SRC/tests/kernel/server/lib.sh"
need kubectl
pk_start "$WORK/data" --write-kubeconfig "$WORK/kubeconfig" \
	--simulate-board "$PODKERNEL_SRC/boards/gpu-cluster.yaml"
pk_kubeconfig "$WORK/kubeconfig"
F="$PODKERNEL_SRC/tests/fixtures/kueue"
k() { timeout 20 kubectl --request-timeout=10s "$@"; }
wait_for() {
	what=$1; shift
	i=0
	until "$@" >/dev/null 2>&1; do
		[ $i -lt 200 ] || fail "$what"
		sleep 0.1
		i=$((i + 1))
	done
}

for i in 1 2; do
	k apply --validate=strict -f "$F/single-clusterqueue-setup.yaml" >"$WORK/out" 2>&1 ||
		fail "single-clusterqueue-setup: $(cat "$WORK/out")"
done
grep -q 'clusterqueue.kueue.x-k8s.io/cluster-queue unchanged' "$WORK/out" ||
	fail "second apply: $(cat "$WORK/out")"
av=$(k get clusterqueues.v1beta2.kueue.x-k8s.io cluster-queue -o jsonpath='{.apiVersion}')
[ "$av" = kueue.x-k8s.io/v1beta2 ] || fail "stored as '$av'"
av=$(k get clusterqueues.v1beta1.kueue.x-k8s.io cluster-queue -o jsonpath='{.apiVersion}')
[ "$av" = kueue.x-k8s.io/v1beta1 ] || fail "read in v1beta1 as '$av'"
k create -f "$F/sample-job.yaml" >"$WORK/out" 2>&1 || fail "sample-job: $(cat "$WORK/out")"
job=$(sed -n 's|^job.batch/\(sample-job-[a-z0-9]*\) created$|\1|p' "$WORK/out")
[ -n "$job" ] || fail "sample-job: $(cat "$WORK/out")"
wait_for "$job has not 3 pods bound" sh -c "[ \$(kubectl get pods -l job-name=$job \
-o jsonpath='{.items[*].spec.nodeName}' | wc -w) = 3 ]"
adm=$(k get job "$job" -o jsonpath='{.metadata.annotations.queue\.podkernel\.dev/admission}')
[ "$adm" = cluster-queue/default-flavor ] || fail "$job admitted as '$adm'"
wait_for "cluster-queue does not count $job" sh -c \
	'[ "$(kubectl get clusterqueue cluster-queue -o jsonpath={.status.admittedWorkloads})" = 1 ]'

# the topology-aware setup: 4 hosts of 2 racks in the flavor's node group
for n in gpu-b1-r0-n0:r0 gpu-b1-r0-n1:r0 gpu-b1-r1-n0:r1 gpu-b1-r1-n1:r1; do
	k label node "${n%:*}" cloud.provider.com/node-group=tas-group \
		cloud.provider.com/topology-block=b1 cloud.provider.com/topology-rack="${n#*:}" \
		>"$WORK/out" 2>&1 || fail "label: $(cat "$WORK/out")"
done
k apply --validate=strict -f "$F/tas-sample-queues.yaml" >"$WORK/out" 2>&1 ||
	fail "tas-sample-queues: $(cat "$WORK/out")"
k create -f "$F/tas-sample-job-required.yaml" >"$WORK/out" 2>&1 || fail "tas job: $(cat "$WORK/out")"
tas=$(sed -n 's|^job.batch/\(tas-sample-required[a-z0-9]*\) created$|\1|p' "$WORK/out")
[ -n "$tas" ] || fail "tas job: $(cat "$WORK/out")"
wait_for "$tas has not 10 pods bound" sh -c "[ \$(kubectl get pods -l job-name=$tas \
-o jsonpath='{.items[*].spec.nodeName}' | wc -w) = 10 ]"
racks=$(for n in $(k get pods -l job-name="$tas" -o jsonpath='{.items[*].spec.nodeName}'); do
	k get node "$n" -o jsonpath='{.metadata.labels.cloud\.provider\.com/topology-rack}{"\n"}'
done | sort -u | tr '\n' ' ')
[ "$racks" = "r0 " ] || fail "$tas's pods are in racks '$racks'"

# the Cohort page: a Cohort with quota, a ClusterQueue in it by spec.cohort
k apply --validate=strict -f "$F/cohort-quota.yaml" >"$WORK/out" 2>&1 ||
	fail "cohort-quota: $(cat "$WORK/out")"
got=$(k get clusterqueues.v1beta2.kueue.x-k8s.io my-cluster-queue -o jsonpath='{.spec.cohortName}')
[ "$got" = hello-cohort ] || fail "v1beta2 cohortName '$got'"
got=$(k get clusterqueues.v1beta1.kueue.x-k8s.io my-cluster-queue \
	-o jsonpath='{.spec.cohort}/{.spec.cohortName}')
[ "$got" = hello-cohort/ ] || fail "v1beta1 cohort '$got'"
# ... and its tree of Cohorts with fair-sharing weights, refused by that field
k apply --validate=strict -f "$F/cohort-tree.yaml" >"$WORK/out" 2>&1 &&
	fail "a Cohort's fairSharing was accepted"
grep -q 'cohort.kueue.x-k8s.io/root-cohort created' "$WORK/out" &&
	grep -q 'spec.fairSharing: Forbidden: not implemented' "$WORK/out" ||
	fail "cohort-tree: $(cat "$WORK/out")"
pk_stop
echo "test_kueue_samples: ok"
