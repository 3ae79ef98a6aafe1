#!/bin/sh
# podctl simulate --queues: the simulator admits the trace's queued rows by the
# queue controller's own pass, so on the same input it admits what `podctl
# schedule` admits (quota within a cohort, a gang that fits no rack, a job
# over its quota, first come first served); quota-first admits the gang that
# cannot be placed and says so; the report's per-queue waits, usage against
# quota and dominant shares; a queued row's priority orders its queue; the
# flags' errors.
# Needs $PODKERNEL_BIN/podctl and $PODKERNEL_SRC (set by tests/run-tests.sh).
set -u
BIN=${PODKERNEL_BIN:-build/bin}
SRC=${PODKERNEL_SRC:-.}
PODCTL="$BIN/podctl"
GPU="$SRC/boards/gpu-cluster.yaml"
if [ ! -x "$PODCTL" ]; then
	echo "test_simulate_queues: $PODCTL not built" >&2
	exit 1
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export TMPDIR="$T"
fail=0
check() { # check NAME CONDITION-RESULT
	if [ "$2" = 0 ]; then echo "ok   $1"; else echo "FAIL $1" >&2; fail=1; fi
}

# Two teams in a cohort of 64 GPUs on a 512-GPU cluster; team-a may borrow 16.
# j0 borrows (40 of 32), j1 is past the borrowing limit, j2 is a gang of 9
# GPUs on one 8-GPU host (it fits quota, never a host), j3 fits, j4 is past
# the cohort's quota after j3.  jobs.yaml: the same rows as suspended Jobs.
FX="$SRC/tests/fixtures/sim-queues"
cp "$FX/queues.yaml" "$FX/trace.csv" "$FX/jobs.yaml" "$T/"

"$PODCTL" simulate --board "$GPU" --trace "$T/trace.csv" --queues "$T/queues.yaml" \
	--admissions "$T/sim.adm" -o "$T/sim.json" >"$T/out" 2>"$T/err"
check "simulate with queues (rc=$?)" $?
"$PODCTL" board nodes "$GPU" >"$T/nodes.json"
"$PODCTL" schedule -f "$T/nodes.json" -f "$T/queues.yaml" -f "$T/jobs.yaml" \
	>"$T/sched.out" 2>"$T/sched.err"
check "podctl schedule of the same input (rc=$?)" $?
awk '$1 == "0.000" { print $3, $4 }' "$T/sim.adm" | sort >"$T/sim.set"
sed -n 's/^admitted: Job \([^ ]*\) by \(.*\)$/\1 \2/p' "$T/sched.err" | sort >"$T/sched.set"
printf '%s\n' "team-a/j0 team-a/gpus" "team-b/j3 team-b/gpus" >"$T/want.set"
cmp -s "$T/sim.set" "$T/sched.set"
check "the simulator admits what podctl schedule admits" $?
cmp -s "$T/sim.set" "$T/want.set"
check "borrowing, the borrowing limit, an unplaceable gang and quota decide ($(tr '\n' ' ' <"$T/sim.set"))" $?
grep -q "pending: Job team-b/j2 .*: pod" "$T/sched.err"
check "podctl schedule says the gang waits for placement" $?

"$PODCTL" simulate --board "$GPU" --trace "$T/trace.csv" --queues "$T/queues.yaml" \
	--admission podkernel,quota-first -o "$T/both.json" >"$T/out" 2>"$T/err"
check "both admission modes (rc=$?)" $?
python3 - "$T/both.json" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
pk, qf = (r["queues"] for r in runs)
assert pk["admission"] == "podkernel" and qf["admission"] == "quota-first", (pk, qf)
# podkernel: j0 and j3, then j1 and j4 a day later, each placed when admitted;
# quota-first admits the gang that fits no host, which holds quota it cannot
# use and keeps j3 out for a day
assert pk["admitted"] == 4 and pk["admitted_unplaceable"] == 0, pk
assert qf["admitted"] == 5 and qf["admitted_unplaceable"] == 1, qf
assert pk["admitted_unplaced_seconds"]["total"] == 0, pk
assert qf["admitted_unplaced_seconds"]["total"] >= 86400, qf
lq = {q["name"]: q for q in pk["local_queues"]}
assert lq["team-a/queue"]["jobs"] == 2 and lq["team-a/queue"]["never_placed"] == 0, lq
assert lq["team-a/queue"]["wait_max"] == 86400, lq
assert lq["team-b/queue"]["never_placed"] == 1 and lq["team-b/queue"]["wait_p50"] == 0, lq
qlq = {q["name"]: q for q in qf["local_queues"]}
assert qlq["team-b/queue"]["wait_p50"] == 86400, qlq
cq = {c["name"]: c["usage"][0] for c in pk["cluster_queues"]}
assert cq["team-a"]["nominal"] == 32 and cq["team-a"]["peak"] == 40, cq
assert cq["team-b"]["peak"] == 24 and cq["team-b"]["mean_of_nominal"] == 0.625, cq
t = {x["name"]: x for x in pk["tenants"]}
assert t["team-a"]["peak_dominant_share"] == round(40 / 512, 4), t
assert t["team-b"]["peak_dominant_share"] == round(24 / 512, 4), t
assert set(pk["series"]["dominant_share"]) == {"team-a", "team-b"}, pk["series"]
PY
check "the report: admissions, unplaceable admissions, waits, usage, shares" $?
grep -q "quota-first admission: 5 admitted, 0 preempted, 1 admitted but not placed" "$T/out"
check "the summary says the admission mode" $?

# the page draws the queues: tables and the tenants' shares over time
"$PODCTL" simulate --board "$GPU" --trace "$T/trace.csv" --queues "$T/queues.yaml" \
	--admission podkernel,quota-first -o "$T/q.html" >"$T/out" 2>"$T/err"
[ $? = 0 ] && grep -q "<h3>Queues: quota-first admission" "$T/q.html" &&
	grep -q "<td>team-b/queue</td>" "$T/q.html" &&
	[ "$(grep -c "Dominant resource share per tenant" "$T/q.html")" = 2 ] &&
	! grep -q "<script" "$T/q.html"
check "the HTML report shows each run's queues" $?

# errors
"$PODCTL" simulate --board "$GPU" --trace "$T/trace.csv" >"$T/out" 2>"$T/err"
[ $? = 2 ] && grep -q "names a tenant: queues are needed" "$T/err"
check "a tenant without --queues is refused" $?
"$PODCTL" simulate --board "$GPU" --trace "$T/trace.csv" --admission quota-first \
	>"$T/out" 2>"$T/err"
[ $? = 2 ] && grep -q "only with --queues" "$T/err"
check "--admission without --queues is refused" $?
"$PODCTL" simulate --board "$GPU" --trace "$T/trace.csv" --queues "$T/queues.yaml" \
	--admission fifo >"$T/out" 2>"$T/err"
[ $? = 2 ]
check "an unknown admission mode is refused" $?
printf 'arrival,duration,tenant\n0,1,team-c\n' >"$T/c.csv"
"$PODCTL" simulate --board "$GPU" --trace "$T/c.csv" --queues "$T/queues.yaml" \
	>"$T/out" 2>"$T/err"
[ $? = 2 ] && grep -q "no LocalQueue .*tenant team-c" "$T/err"
check "a tenant with no LocalQueue is refused" $?
# a queued row's priority is its Job's WorkloadPriorityClass: of two Jobs of
# 32 GPUs that team-a's 48 cannot both hold, the later one of priority 10 is
# admitted first, as podctl schedule admits the same Jobs
printf 'arrival,duration,pods,accelerators,tenant,priority\n0,1d,4,8,team-a,1\n0,1d,4,8,team-a,10\n' >"$T/p.csv"
"$PODCTL" simulate --board "$GPU" --trace "$T/p.csv" --queues "$T/queues.yaml" \
	--admissions "$T/p.adm" -o "$T/p.json" >"$T/out" 2>"$T/err"
check "a queued row's priority is taken (rc=$?)" $?
awk '$1 == "0.000" { print $3, $4 }' "$T/p.adm" >"$T/p.set"
for p in 0:1 1:10; do # the Job of row I, of priority P, as the simulator queues it
	i=${p%:*} p=${p#*:}
	cat <<EOF
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: sim-priority-$p}
value: $p
---
apiVersion: batch/v1
kind: Job
metadata:
  name: j$i
  namespace: team-a
  labels: {kueue.x-k8s.io/queue-name: queue, kueue.x-k8s.io/priority-class: sim-priority-$p}
spec:
  parallelism: 4
  completions: 4
  suspend: true
  scheduling:
    schedulingPolicy: {gang: {minCount: 4}}
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: sim, resources: {requests: {nvidia.com/gpu: "8"}}}]
EOF
done >"$T/p.yaml"
"$PODCTL" schedule -f "$T/nodes.json" -f "$T/queues.yaml" -f "$T/p.yaml" >"$T/p.out" 2>"$T/p.err"
sed -n 's/^admitted: Job \([^ ]*\) by \(.*\)$/\1 \2/p' "$T/p.err" >"$T/p.sched"
[ "$(cat "$T/p.set")" = "team-a/j1 team-a/gpus" ] && cmp -s "$T/p.set" "$T/p.sched"
check "the higher priority goes first, in the simulator as in podctl schedule ($(cat "$T/p.set"))" $?
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n' >"$T/bad.yaml"
"$PODCTL" simulate --board "$GPU" --trace "$T/trace.csv" --queues "$T/bad.yaml" \
	>"$T/out" 2>"$T/err"
[ $? = 2 ] && grep -q "kind Pod: not a queue object" "$T/err"
check "a queue file with other kinds is refused" $?
[ -z "$(ls "$T" | grep podkernel-sim)" ]
check "the scratch stores are removed" $?
exit $fail
