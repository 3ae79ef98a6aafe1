#!/bin/sh
# podctl compile: exit codes, output formats and field-path errors.
# Needs $PODKERNEL_BIN/podctl and $PODKERNEL_SRC (set by tests/run-tests.sh).
set -u
BIN=${PODKERNEL_BIN:-build/bin}
SRC=${PODKERNEL_SRC:-.}
PODCTL="$BIN/podctl"
EX="$SRC/examples/jobs"
if [ ! -x "$PODCTL" ]; then
	echo "test_compile_cmd: $PODCTL not built" >&2
	exit 1
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
check() { # check NAME CONDITION-RESULT
	if [ "$2" = 0 ]; then echo "ok   $1"; else echo "FAIL $1" >&2; fail=1; fi
}
run() { # run EXPECTED-RC ARGS... ; stdout in $T/out, stderr in $T/err
	want=$1
	shift
	"$PODCTL" "$@" >"$T/out" 2>"$T/err"
	rc=$?
	[ "$rc" = "$want" ]
}
flat() { tr -d ' \n\t' <"$1"; }

# KEP-6089 Example 1 as JSON: a List with the Workload, the PodGroup and 4 pods
run 0 compile -f "$EX/job-gang-zone.yaml"
check "job example compiles (rc=$rc)" $?
flat "$T/out" | grep -q '"kind":"List"'
check "output is a List" $?
[ "$(flat "$T/out" | grep -o '"kind":"Pod"' | wc -l)" = 4 ]
check "parallelism pods" $?
flat "$T/out" | grep -q '"gang":{"minCount":4}'
check "gang minCount defaults to parallelism" $?
flat "$T/out" | grep -q '"topology":\[{"key":"topology.kubernetes.io/zone"}\]'
check "topology level written back as key" $?
[ ! -s "$T/err" ]
check "nothing on stderr" $?

# YAML output of the JobSet example
run 0 compile -f "$EX/jobset-distributed-training.yaml" -o yaml
check "jobset example compiles to yaml (rc=$rc)" $?
grep -q '^kind: List' "$T/out" && grep -q 'kind: CompositePodGroup' "$T/out" &&
	grep -q 'parentCompositePodGroupName: distributed-training-worker' "$T/out"
check "yaml holds the group tree" $?

# structural comparison with the expected objects, when python3 is there
if command -v python3 >/dev/null 2>&1; then
	for f in job-gang-zone job-basic jobset-distributed-training trainjob-delegated; do
		"$PODCTL" compile -f "$EX/$f.yaml" -o json >"$T/$f.json" 2>"$T/err"
		python3 - "$T/$f.json" "$SRC/tests/kernel/builder/expected/$f.json" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
sys.exit(0 if a == b else 1)
EOF
		check "$f matches the expected objects" $?
	done
fi

# compiling the output again changes nothing: no Job or JobSet is left
run 0 compile -f "$EX/trainjob-delegated.yaml" && cp "$T/out" "$T/once.json"
run 0 compile -f "$T/once.json"
check "compile output is a fixed point (rc=$rc)" $?
cmp -s "$T/out" "$T/once.json"
check "fixed point output identical" $?

# invalid input: exit 2 with FILE: path: message
cat >"$T/bad.yaml" <<'EOF'
apiVersion: batch/v1
kind: Job
metadata: {name: bad}
spec:
  parallelism: 2
  scheduling:
    schedulingPolicy: {gang: {minCount: 0}}
  template: {spec: {containers: [{name: c}]}}
EOF
run 2 compile -f "$T/bad.yaml"
check "invalid Job exits 2 (rc=$rc)" $?
grep -q "bad.yaml: Job default/bad: spec.scheduling.schedulingPolicy.gang.minCount: Invalid value: 0: must be greater than or equal to 1" "$T/err"
check "field path on stderr" $?
[ ! -s "$T/out" ]
check "nothing on stdout on error" $?

cat >"$T/split.yaml" <<'EOF'
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: split}
spec:
  replicatedJobs:
  - name: w
    template:
      spec:
        scheduling: {schedulingPolicy: {gang: {}}}
        template: {spec: {containers: [{name: c}]}}
EOF
run 2 compile -f "$T/split.yaml"
check "split-brain JobSet exits 2 (rc=$rc)" $?
grep -q "spec.replicatedJobs\[0\].template.spec.scheduling: Forbidden" "$T/err"
check "split brain reported at the template path" $?

printf 'apiVersion: batch/v1\nkind: Job\nmetadata: {name: x\n' >"$T/syntax.yaml"
run 2 compile -f "$T/syntax.yaml"
check "YAML syntax error exits 2 (rc=$rc)" $?
grep -q "syntax.yaml:[0-9]*:[0-9]*" "$T/err"
check "syntax error names FILE:LINE:COL" $?

# usage and I/O
run 2 compile
check "no -f exits 2 (rc=$rc)" $?
run 2 compile -f "$EX/job-basic.yaml" -o xml
check "bad -o exits 2 (rc=$rc)" $?
run 2 compile --frobnicate
check "unknown option exits 2 (rc=$rc)" $?
run 2 compile -f "$T/does-not-exist.yaml"
check "missing file exits 2 (rc=$rc)" $?
run 0 compile --help
check "--help exits 0 (rc=$rc)" $?
# --max-input-size: the file limit (default 256Mi) may be lowered or raised
run 2 compile -f "$EX/job-gang-zone.yaml" --max-input-size 100
check "a file over --max-input-size exits 2 (rc=$rc)" $?
grep -q "job-gang-zone.yaml:1:1: input is larger than 100 bytes" "$T/err"
check "the limit message names the file" $?
run 0 compile -f "$EX/job-gang-zone.yaml" --max-input-size=1Mi
check "--max-input-size=1Mi admits it (rc=$rc)" $?
run 2 compile -f "$EX/job-gang-zone.yaml" --max-input-size
check "--max-input-size without a size exits 2 (rc=$rc)" $?

# spec.suspend: a suspended JobSet compiles to its groups and no pods; a
# suspended Job schedules nothing offline
sed 's/^spec:/spec:\n  suspend: true/' "$EX/jobset-distributed-training.yaml" >"$T/js-suspended.yaml"
run 0 compile -f "$T/js-suspended.yaml" -o json
check "a suspended JobSet compiles (rc=$rc)" $?
flat "$T/out" | grep -q '"kind":"CompositePodGroup"' && ! flat "$T/out" | grep -q '"kind":"Pod"'
check "a suspended JobSet: groups, no pods" $?
sed 's/^spec:/spec:\n  suspend: yes-please/' "$EX/jobset-distributed-training.yaml" >"$T/js-bad.yaml"
run 2 compile -f "$T/js-bad.yaml"
check "a JobSet's non-boolean suspend is refused (rc=$rc)" $?
grep -q "spec.suspend: Invalid value" "$T/err"
check "the refusal names spec.suspend" $?
cat >"$T/node.yaml" <<'EON'
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {topology.kubernetes.io/zone: z1}}
status: {allocatable: {cpu: "64", memory: 64Gi, pods: "110"}}
EON
sed 's/^spec:/spec:\n  suspend: true/' "$EX/job-gang-zone.yaml" >"$T/job-suspended.yaml"
run 0 schedule -f "$T/node.yaml" -f "$T/job-suspended.yaml" -o json
check "a suspended Job schedules (rc=$rc)" $?
flat "$T/out" | grep -q '"kind":"PodGroup"' && ! flat "$T/out" | grep -q '"kind":"Pod"'
check "a suspended Job: its group, no pods" $?
run 0 schedule -f "$T/node.yaml" -f "$EX/job-gang-zone.yaml" -o json
[ "$(flat "$T/out" | grep -o '"nodeName":"n1"' | wc -l)" = 4 ]
check "the same Job not suspended: 4 pods bound" $?

# queues admit offline as standalone podkerneld does: 8 CPUs of quota admit a
# Job of 4 pods of 2 (bound) and hold the next one (suspended, no pods, why)
cat >"$T/queues.yaml" <<'EOQ'
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
    flavors: [{name: default-flavor, resources: [{name: cpu, nominalQuota: 8}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q, namespace: default}
spec: {clusterQueue: cq}
EOQ
qjob() {
	cat <<EOJ
apiVersion: batch/v1
kind: Job
metadata: {name: $1, namespace: default, labels: {kueue.x-k8s.io/queue-name: q}}
spec:
  parallelism: $2
  suspend: true
  template:
    spec:
      containers: [{name: c, image: x, resources: {requests: {cpu: "2"}}}]
EOJ
}
{ qjob first 4; echo ---; qjob second 1; } >"$T/qjobs.yaml"
run 0 schedule -f "$T/node.yaml" -f "$T/queues.yaml" -f "$T/qjobs.yaml" -o json
check "queued Jobs schedule offline (rc=$rc)" $?
[ "$(flat "$T/out" | grep -o '"nodeName":"n1"' | wc -l)" = 4 ]
check "the first Job is admitted: its 4 pods bound" $?
grep -qx 'admitted: Job default/first by cq/default-flavor' "$T/err"
check "stderr says the first Job is admitted" $?
! flat "$T/out" | grep -q '"name":"second-0"'
check "the second Job waits: no pods" $?
grep -qx 'pending: Job default/second (position 1): insufficient unused quota for cpu in flavor default-flavor of ClusterQueue cq, 2 more needed' "$T/err"
check "stderr says why the second Job waits" $?
# StrictFIFO blocks behind its head, BestEffortFIFO does not: of 8 CPUs, 6
# go to the first Job; the second (4) does not fit; the third (2) would
for strategy in StrictFIFO BestEffortFIFO; do
	sed "s/^  namespaceSelector: {}/  namespaceSelector: {}\n  queueingStrategy: $strategy/" \
		"$T/queues.yaml" >"$T/fifo.yaml"
	{ qjob j1 3; echo ---; qjob j2 2; echo ---; qjob j3 1; } >"$T/fifo-jobs.yaml"
	run 0 schedule -f "$T/node.yaml" -f "$T/fifo.yaml" -f "$T/fifo-jobs.yaml" -o json
	check "$strategy schedules offline (rc=$rc)" $?
	if [ $strategy = StrictFIFO ]; then
		grep -qx 'pending: Job default/j3 (position 2): StrictFIFO: waiting behind default/j2' "$T/err"
	else
		grep -qx 'admitted: Job default/j3 by cq/default-flavor' "$T/err"
	fi
	check "$strategy: the third Job $([ $strategy = StrictFIFO ] && echo waits behind the second || echo is admitted)" $?
done

# flavor order: the first flavor with quota for all of it is taken (Kueue's
# on-demand then spot): 2 CPUs of on-demand, 8 of spot; a Job of 4 CPUs gets
# spot, a Job of 2 on-demand
cat >"$T/flavors.yaml" <<'EOQ'
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: on-demand}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: spot}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - {name: on-demand, resources: [{name: cpu, nominalQuota: 2}]}
    - {name: spot, resources: [{name: cpu, nominalQuota: 8}]}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q, namespace: default}
spec: {clusterQueue: cq}
EOQ
{ qjob big 2; echo ---; qjob small 1; } >"$T/fjobs.yaml"
run 0 schedule -f "$T/node.yaml" -f "$T/flavors.yaml" -f "$T/fjobs.yaml" -o json
check "flavored queues schedule offline (rc=$rc)" $?
grep -qx 'admitted: Job default/big by cq/spot' "$T/err" && grep -qx 'admitted: Job default/small by cq/on-demand' "$T/err"
check "each Job gets the first flavor that fits it" $?

# Kueue's fair sharing: two ClusterQueues borrow all of a Cohort's 12 CPUs,
# weights 1 and 2, each with 12 Jobs of 1 CPU waiting: the shares converge to
# the weights, 4 and 8 admitted
cat >"$T/fair.yaml" <<'EOQ'
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: pool}
spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: default-flavor, resources: [{name: cpu, nominalQuota: 12}]}]
EOQ
for q in a:1 b:2; do
	cat >>"$T/fair.yaml" <<EOQ
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq-${q%:*}}
spec:
  cohortName: pool
  namespaceSelector: {}
  fairSharing: {weight: ${q#*:}}
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: default-flavor, resources: [{name: cpu, nominalQuota: 0}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q-${q%:*}, namespace: default}
spec: {clusterQueue: cq-${q%:*}}
EOQ
	for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
		printf -- '---\n'
		qjob "${q%:*}$i" 1 | sed "s/queue-name: q}/queue-name: q-${q%:*}}/; s/cpu: \"2\"/cpu: \"1\"/"
	done >>"$T/fair.yaml"
done
run 0 schedule -f "$T/node.yaml" -f "$T/fair.yaml" -o json
check "fair-shared queues schedule offline (rc=$rc)" $?
[ "$(grep -c '^admitted: Job default/a' "$T/err")" = 4 ] && [ "$(grep -c '^admitted: Job default/b' "$T/err")" = 8 ]
check "shares converge to the weights: 4 and 8 admitted ($(grep -c '^admitted: Job default/a' "$T/err"), $(grep -c '^admitted: Job default/b' "$T/err"))" $?

# the queue controller's annotation is its own offline too
qjob sneaky 1 | sed 's|^metadata: {|metadata: {annotations: {queue.podkernel.dev/admission: cq/default-flavor}, |' >"$T/sneaky.yaml"
run 2 schedule -f "$T/node.yaml" -f "$T/queues.yaml" -f "$T/sneaky.yaml"
check "a Job created admitted is refused offline (rc=$rc)" $?
grep -q 'metadata.annotations\[queue.podkernel.dev/admission\]: Forbidden' "$T/err"
check "the refusal names the annotation" $?

# LeaderWorkerSets offline: the serving story's two stages under their parent,
# every pod bound, each group's leader and worker in one cube
run 0 board nodes "$SRC/boards/tpu-superslice.yaml" -o json
cp "$T/out" "$T/superslice.json"
run 0 schedule -f "$T/superslice.json" -f "$SRC/examples/stories/serving-lws.yaml" -o json
check "the LWS serving story schedules (rc=$rc)" $?
for p in prefill-0 prefill-0-1 prefill-1 prefill-1-1 decode-0 decode-0-1 decode-1 decode-1-1; do
	flat "$T/out" | grep -q "\"name\":\"llm-serve-$p\",\"namespace\":\"serving-lws\"" || echo "missing $p"
done >"$T/missing"
[ ! -s "$T/missing" ]
check "leaders NAME-I and workers NAME-I-1 of both stages" $?
[ "$(flat "$T/out" | grep -o '"nodeName":"tpu-ss[0-9]*-h[0-9]*"' | wc -l)" = 11 ]
check "all 11 pods bound" $?
python3 - "$T/superslice.json" "$T/out" <<'PY'
import json, sys
cube = {n["metadata"]["name"]: n["metadata"]["labels"]["topology.podkernel.dev/cube"]
        for n in json.load(open(sys.argv[1]))["items"]}
node = {o["metadata"]["name"]: o["spec"].get("nodeName")
        for o in json.load(open(sys.argv[2]))["items"] if o["kind"] == "Pod"}
bad = [g for g in ("prefill-0", "prefill-1", "decode-0", "decode-1")
       if cube.get(node.get("llm-serve-" + g)) is None or
       cube.get(node["llm-serve-" + g]) != cube.get(node.get("llm-serve-%s-1" % g))]
sys.exit(1 if bad else 0)
PY
check "each LWS group in one cube" $?
sed 's/    size: 2/    size: 2\n    subGroupPolicy: {subGroupSize: 1}/' \
	"$SRC/examples/stories/serving-lws.yaml" >"$T/lws-bad.yaml"
run 2 schedule -f "$T/superslice.json" -f "$T/lws-bad.yaml"
check "an LWS field not implemented is refused offline (rc=$rc)" $?
grep -q 'spec.leaderWorkerTemplate.subGroupPolicy: Forbidden: not implemented' "$T/err"
check "the refusal names the field" $?

exit $fail
