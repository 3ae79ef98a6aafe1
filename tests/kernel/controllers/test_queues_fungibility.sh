#!/bin/sh
# A ClusterQueue's spec.flavorFungibility, offline (`podctl schedule`), in the
# simulator (`podctl simulate --queues`) and standalone (podkerneld on the same
# board), which all admit by the queue controller's own pass, with the same
# admissions (test_queues_flavor.c runs whenCanPreempt standalone).
#
# Mirrors Kueue's flavorassigner_test case "when borrowing while preemption
# is needed for flavor one; WhenCanBorrow=TryNextFlavor": flavor `reserved`
# holds none of team-a's own quota (it may borrow 16 GPUs of the lender's in
# the cohort), flavor `on-demand` holds 16.  With whenCanBorrow
# TryNextFlavor, the first Job of 16 GPUs goes to on-demand, without
# borrowing; the second, with on-demand full, borrows in reserved.  Team-b,
# the same queue with the default (MayStopSearch), borrows in reserved at
# once.  A flavor whose nodes cannot place a Job (team-c's `nowhere`,
# selecting no node) is passed over for the next.  Values refused by path.
set -u
BIN=${PODKERNEL_BIN:-build/bin}
SRC=${PODKERNEL_SRC:-.}
PODCTL="$BIN/podctl"
GPU="$SRC/boards/gpu-cluster.yaml"
[ -x "$PODCTL" ] || { echo "test_queues_fungibility: $PODCTL not built" >&2; exit 1; }
T=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
export TMPDIR="$T"
fail=0
check() { # check NAME CONDITION-RESULT
	if [ "$2" = 0 ]; then echo "ok   $1"; else echo "FAIL $1" >&2; fail=1; fi
}

# cq NAME FUNGIBILITY FLAVORS: a ClusterQueue of cohort research over GPUs
cq() {
	cat <<EOF
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: $1}
spec:
  cohortName: research
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: $1}}
  flavorFungibility: $2
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: $3
---
apiVersion: v1
kind: Namespace
metadata: {name: $1}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: queue, namespace: $1}
spec: {clusterQueue: $1}
EOF
}
TWO='[{name: reserved, resources: [{name: nvidia.com/gpu, nominalQuota: 0, borrowingLimit: 16}]}, {name: on-demand, resources: [{name: nvidia.com/gpu, nominalQuota: 16}]}]'
{
	cat <<'EOF'
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: reserved}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: on-demand}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: nowhere}
spec: {nodeLabels: {pool: nowhere}}
EOF
	cq team-a '{whenCanBorrow: TryNextFlavor, whenCanPreempt: MayStopSearch}' "$TWO"
	cq team-b '{}' "$TWO"
	cq team-c '{}' '[{name: nowhere, resources: [{name: nvidia.com/gpu, nominalQuota: 16}]}, {name: on-demand, resources: [{name: nvidia.com/gpu, nominalQuota: 16}]}]'
	cq lender '{}' '[{name: reserved, resources: [{name: nvidia.com/gpu, nominalQuota: 48}]}]'
} >"$T/queues.yaml"
# team-a's two Jobs, then team-b's and team-c's: 2 pods of 8 GPUs each
cat >"$T/trace.csv" <<'EOF'
arrival,duration,pods,accelerators,topology,tenant,queue
0,1d,2,8,,team-a,queue
0,1d,2,8,,team-a,queue
0,1d,2,8,,team-b,queue
0,1d,2,8,,team-c,queue
EOF
# job NAMESPACE NAME: the rows of trace.csv as the suspended Jobs the simulator queues
job() {
	cat <<EOF
---
apiVersion: batch/v1
kind: Job
metadata: {name: $2, namespace: $1, labels: {kueue.x-k8s.io/queue-name: queue}}
spec:
  parallelism: 2
  completions: 2
  suspend: true
  scheduling:
    schedulingPolicy: {gang: {minCount: 2}}
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: sim, resources: {requests: {nvidia.com/gpu: "8"}}}]
EOF
}
{ job team-a j0; job team-a j1; job team-b j2; job team-c j3; } >"$T/jobs.yaml"

"$PODCTL" board nodes "$GPU" >"$T/nodes.json"
"$PODCTL" schedule -f "$T/nodes.json" -f "$T/queues.yaml" -f "$T/jobs.yaml" \
	>"$T/sched.out" 2>"$T/sched.err"
check "podctl schedule (rc=$?)" $?
sed -n 's/^admitted: Job \([^ ]*\) by \(.*\)$/\1 \2/p' "$T/sched.err" | sort >"$T/sched.set"
printf '%s\n' "team-a/j0 team-a/on-demand" "team-a/j1 team-a/reserved" \
	"team-b/j2 team-b/reserved" "team-c/j3 team-c/on-demand" >"$T/want.set"
cmp -s "$T/sched.set" "$T/want.set"
check "TryNextFlavor passes over borrowing, MayStopSearch borrows, an unplaceable flavor is passed over ($(tr '\n' ' ' <"$T/sched.set"))" $?

"$PODCTL" simulate --board "$GPU" --trace "$T/trace.csv" --queues "$T/queues.yaml" \
	--admissions "$T/sim.adm" -o "$T/sim.json" >"$T/out" 2>"$T/err"
check "podctl simulate --queues (rc=$?)" $?
awk '$1 == "0.000" { print $3, $4 }' "$T/sim.adm" | sort >"$T/sim.set"
cmp -s "$T/sim.set" "$T/sched.set"
check "the simulator admits what podctl schedule admits ($(tr '\n' ' ' <"$T/sim.set"))" $?

# standalone podkerneld on the same board admits the same Jobs the same way
"$BIN/podkerneld" --listen 127.0.0.1:0 --data-dir "$T/data" --simulate-board "$GPU" \
	--write-kubeconfig "$T/kubeconfig" 2>"$T/pk.log" &
PK=$!
trap 'kill "$PK" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
i=0
until [ -s "$T/kubeconfig" ] || [ $i -ge 100 ]; do sleep 0.1; i=$((i + 1)); done
export KUBECONFIG="$T/kubeconfig"
"$PODCTL" apply -f "$T/queues.yaml" >"$T/out" 2>&1 && "$PODCTL" apply -f "$T/jobs.yaml" >>"$T/out" 2>&1
check "standalone: the queues and Jobs apply (rc=$?)" $?
i=0
while [ $i -lt 100 ]; do
	for j in team-a/j0 team-a/j1 team-b/j2 team-c/j3; do
		a=$("$PODCTL" get job -n "${j%/*}" "${j#*/}" -o json 2>/dev/null |
			sed -n 's/.*"queue.podkernel.dev\/admission": *"\([^"]*\)".*/\1/p')
		echo "$j $a"
	done | sort >"$T/pk.set"
	cmp -s "$T/pk.set" "$T/want.set" && break
	sleep 0.1
	i=$((i + 1))
done
cmp -s "$T/pk.set" "$T/want.set"
check "standalone admits what podctl schedule admits ($(tr '\n' ' ' <"$T/pk.set"))" $?
kill "$PK"
wait "$PK"
check "podkerneld stops cleanly (rc=$?)" $?

# values are refused by path, as Kueue's schema refuses them
cq team-a '{whenCanBorrow: Borrow}' "$TWO" >"$T/bad.yaml"
"$PODCTL" schedule -f "$T/nodes.json" -f "$T/bad.yaml" >"$T/out" 2>"$T/err"
[ $? != 0 ] && grep -q 'spec.flavorFungibility.whenCanBorrow: Unsupported value: "Borrow"' "$T/err"
check "a v1beta1 value in v1beta2 is refused by path" $?
exit $fail
