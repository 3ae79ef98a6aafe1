#!/bin/sh
# LeaderWorkerSet with the real `kubectl`, against a standalone podkerneld
# on a simulated gpu-cluster board whose pods run (--sim-lifecycle):
# discovery and explain; the groups' pods, names, labels and hostnames; each
# group a gang placed whole in one rack (exclusive-topology), different
# groups in different racks; the printer columns, status and Events; scale up
# (kubectl scale, the scale subresource) and down by replicas (highest
# indices first); a deleted worker recreates its whole group; a rolling
# update with maxUnavailable 0 and maxSurge 1 places a surge group NAME-2
# before an old group goes and never has fewer than 2 groups Ready;
# LeaderReady creates the workers only once the leader runs; a field not
# implemented is refused by path; deleting the set collects everything it
# made.
. "$PODKERNEL_SRC/tests/kernel/server/lib.sh"
need kubectl

k() { timeout 60 kubectl --request-timeout=20s "$@"; }

# wait_for WHAT WANT CMD...: poll CMD (10 s) until it prints WANT.
wait_for() {
	what=$1; want=$2; shift 2
	i=0
	while [ $i -lt 100 ]; do
		got=$("$@" 2>&1)
		[ "$got" = "$want" ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	fail "$what: got '$got', want '$want'"
}

pods() { k get pods -o name | sed 's|pod/||' | sort | tr '\n' ' '; }
status() { k get lws "$1" -o jsonpath='{.status.readyReplicas}/{.status.replicas}/{.status.updatedReplicas}'; }
# the rack (gpu-bB-rR) each pod of the set runs in, one "pod=rack" per line
racks() {
	k get pods -l leaderworkerset.sigs.k8s.io/name=llm \
		-o jsonpath='{range .items[*]}{.metadata.name}={.spec.nodeName}{"\n"}{end}' |
		sed 's/-n[0-9]*$//'
}

pk_start "$WORK/data" --simulate-board "$PODKERNEL_SRC/boards/gpu-cluster.yaml" \
	--sim-lifecycle --sim-start-delay 1
pk_kubeconfig_open "$WORK/kubeconfig"

# discovery, the short name and the schema kubectl explain reads
k api-resources --api-group=leaderworkerset.x-k8s.io >"$WORK/out" 2>&1
grep -q '^leaderworkersets  *lws  *leaderworkerset.x-k8s.io/v1  *true  *LeaderWorkerSet' "$WORK/out" ||
	fail "api-resources: $(cat "$WORK/out")"
k explain lws.spec.leaderWorkerTemplate >"$WORK/out" 2>&1 && grep -q 'restartPolicy' "$WORK/out" ||
	fail "explain: $(cat "$WORK/out")"

cat >"$WORK/llm.yaml" <<'Y'
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: llm
  annotations:
    leaderworkerset.sigs.k8s.io/exclusive-topology: topology.podkernel.dev/rack
spec:
  replicas: 2
  leaderWorkerTemplate:
    size: 3
    workerTemplate:
      metadata: {labels: {app: llm}}
      spec:
        containers:
        - name: engine
          image: registry.local/llm:v1
          resources: {requests: {cpu: "8", nvidia.com/gpu: "8"}}
  rolloutStrategy:
    rollingUpdateConfiguration: {maxUnavailable: 0, maxSurge: 1}
Y
k apply -f "$WORK/llm.yaml" >"$WORK/out" 2>&1 || fail "apply: $(cat "$WORK/out")"
wait_for "groups" "2/2/2" status llm
[ "$(pods)" = "llm-0 llm-0-1 llm-0-2 llm-1 llm-1-1 llm-1-2 " ] || fail "pods: $(pods)"
# LWS's labels, annotations and hostnames
[ "$(k get pods -l leaderworkerset.sigs.k8s.io/worker-index=0,leaderworkerset.sigs.k8s.io/name=llm -o name | tr '\n' ' ')" = "pod/llm-0 pod/llm-1 " ] ||
	fail "leaders by label"
got=$(k get pod llm-1-2 -o jsonpath='{.metadata.labels.leaderworkerset\.sigs\.k8s\.io/group-index}/{.metadata.annotations.leaderworkerset\.sigs\.k8s\.io/size}/{.metadata.annotations.leaderworkerset\.sigs\.k8s\.io/leader-name}/{.spec.hostname}.{.spec.subdomain}/{.spec.schedulingGroup.podGroupName}')
[ "$got" = "1/3/llm-1/llm-1-2.llm/llm-1" ] || fail "pod llm-1-2: $got"
# each group a gang of 3 in one rack; the groups in different racks
[ "$(k get pg llm-0 -o jsonpath='{.spec.schedulingPolicy.gang.minCount}/{.spec.parentCompositePodGroupName}')" = 3/llm ] ||
	fail "PodGroup llm-0: $(k get pg llm-0 -o yaml)"
[ "$(racks | grep '^llm-0' | cut -d= -f2 | sort -u | wc -l)" = 1 ] || fail "group 0 spread: $(racks)"
[ "$(racks | grep '^llm-1' | cut -d= -f2 | sort -u | wc -l)" = 1 ] || fail "group 1 spread: $(racks)"
[ "$(racks | cut -d= -f2 | sort -u | wc -l)" = 2 ] || fail "groups share a rack: $(racks)"
k get lws llm >"$WORK/out" 2>&1
grep -q '^llm  *2  *2  *2 ' "$WORK/out" || fail "get lws: $(cat "$WORK/out")"
[ "$(k get lws llm -o jsonpath='{.status.conditions[?(@.type=="Available")].status}')" = True ] ||
	fail "Available: $(k get lws llm -o yaml)"
wait_for "the AllGroupsReady Event" "All replicas are ready, with 2 groups ready of total 2 groups" \
	sh -c 'timeout 20 kubectl get events --field-selector reason=AllGroupsReady,involvedObject.name=llm -o jsonpath="{.items[0].message}"'

# scale up (kubectl scale: the scale subresource), then down: the highest indices go
k scale lws llm --replicas=3 >"$WORK/out" 2>&1 || fail "kubectl scale: $(cat "$WORK/out")"
wait_for "scaled up" "3/3/3" status llm
got=$(k get --raw /apis/leaderworkerset.x-k8s.io/v1/namespaces/default/leaderworkersets/llm/scale)
echo "$got" | grep -q '"kind":"Scale","apiVersion":"autoscaling/v1"' &&
	echo "$got" | grep -q '"spec":{"replicas":3},"status":{"replicas":3,"selector":"leaderworkerset.sigs.k8s.io/name=llm,leaderworkerset.sigs.k8s.io/worker-index=0"}' ||
	fail "scale subresource: $got"
k scale lws llm --replicas=1 --current-replicas=2 >"$WORK/out" 2>&1 && fail "a stale --current-replicas scaled"
grep -q 'Expected replicas to be 2, was 3' "$WORK/out" || fail "current-replicas: $(cat "$WORK/out")"
k patch lws llm --type=merge -p '{"spec":{"replicas":1}}' >/dev/null || fail "scale to 1"
wait_for "scaled down" "llm-0 llm-0-1 llm-0-2 " pods
wait_for "status after scaling down" "1/1/1" status llm
[ "$(k get pg -o name | tr '\n' ' ')" = "podgroup.scheduling.k8s.io/llm-0 " ] || fail "groups left: $(k get pg -o name)"
k patch lws llm --type=merge -p '{"spec":{"replicas":2}}' >/dev/null || fail "scale to 2"
wait_for "scaled back" "2/2/2" status llm

# a deleted worker recreates its whole group (RecreateGroupOnPodRestart, the default)
uid=$(k get pod llm-0 -o jsonpath='{.metadata.uid}')
k delete pod llm-0-1 >/dev/null 2>&1 || fail "delete llm-0-1"
i=0
while [ $i -lt 100 ] && [ "$(k get pod llm-0 -o jsonpath='{.metadata.uid}' 2>/dev/null)" = "$uid" ]; do
	sleep 0.1
	i=$((i + 1))
done
[ "$(k get pod llm-0 -o jsonpath='{.metadata.uid}' 2>/dev/null)" != "$uid" ] ||
	fail "the leader of the broken group was not recreated"
wait_for "group recreated" "2/2/2" status llm

# a rolling update: the surge group llm-2 comes first, Ready groups never below 2
k patch lws llm --type=merge -p \
	'{"spec":{"leaderWorkerTemplate":{"workerTemplate":{"metadata":{"labels":{"app":"llm","v":"2"}}}}}}' \
	>/dev/null || fail "patch template"
rev=$(k get pod llm-0 -o jsonpath='{.metadata.labels.leaderworkerset\.sigs\.k8s\.io/template-revision-hash}')
surge=no
i=0
while [ $i -lt 150 ]; do
	s=$(status llm)
	ready=${s%%/*}
	[ -n "$ready" ] && [ "$ready" -lt 2 ] && fail "only $ready groups Ready during the update"
	k get pod llm-2 >/dev/null 2>&1 && surge=yes
	[ "$surge" = yes ] && [ "$(pods)" = "llm-0 llm-0-1 llm-0-2 llm-1 llm-1-1 llm-1-2 " ] &&
		[ "$s" = 2/2/2 ] && break
	sleep 0.1
	i=$((i + 1))
done
[ "$surge" = yes ] || fail "no surge group was placed"
[ "$(status llm)" = 2/2/2 ] && [ "$(pods)" = "llm-0 llm-0-1 llm-0-2 llm-1 llm-1-1 llm-1-2 " ] ||
	fail "after the update: $(status llm) $(pods)"
new=$(k get pods -l leaderworkerset.sigs.k8s.io/name=llm -o jsonpath='{.items[*].metadata.labels.leaderworkerset\.sigs\.k8s\.io/template-revision-hash}' | tr ' ' '\n' | sort -u)
[ "$(echo "$new" | wc -l)" = 1 ] && [ "$new" != "$rev" ] || fail "revisions after the update: $new (was $rev)"

# LeaderReady (basic groups): the workers come once the leader runs (1 s)
cat >"$WORK/lr.yaml" <<'Y'
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: lr}
spec:
  startupPolicy: LeaderReady
  leaderWorkerTemplate:
    size: 3
    workerTemplate:
      spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}
  scheduling: {replica: {schedulingPolicy: {basic: {}}}}
Y
k apply -f "$WORK/lr.yaml" >/dev/null || fail "apply lr"
[ "$(k get pods -l leaderworkerset.sigs.k8s.io/name=lr -o name | tr '\n' ' ')" = "pod/lr-0 " ] ||
	fail "LeaderReady: workers before the leader runs: $(k get pods -l leaderworkerset.sigs.k8s.io/name=lr -o name)"
wait_for "LeaderReady workers" "pod/lr-0 pod/lr-0-1 pod/lr-0-2 " \
	sh -c 'timeout 20 kubectl get pods -l leaderworkerset.sigs.k8s.io/name=lr -o name | tr "\n" " "'

# not implemented: refused by path, nothing stored
sed 's/name: llm$/name: bad/; s/    size: 3/    size: 3\n    subGroupPolicy: {subGroupSize: 1}/' \
	"$WORK/llm.yaml" >"$WORK/bad.yaml"
k apply -f "$WORK/bad.yaml" >"$WORK/out" 2>&1 && fail "subGroupPolicy accepted"
grep -q 'spec.leaderWorkerTemplate.subGroupPolicy: Forbidden: not implemented' "$WORK/out" ||
	fail "subGroupPolicy: $(cat "$WORK/out")"
k get lws bad >/dev/null 2>&1 && fail "a refused LeaderWorkerSet was stored"

# deleting the set collects its Workload, groups and pods
k delete lws llm lr >/dev/null 2>&1 || fail "delete"
wait_for "collected" "" sh -c 'timeout 20 kubectl get pods,pg,cpg,workloads -o name'
pk_stop
