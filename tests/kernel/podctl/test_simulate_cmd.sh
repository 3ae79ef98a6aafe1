#!/bin/sh
# podctl simulate: exit codes, the three report forms, byte-identical JSON for
# the same seed, two strategies and two boards side by side, errors that name
# the trace's line and column, the allocation at arrival levels (--levels),
# the cap on a trace's pods in all (--max-total-pods).
# Needs $PODKERNEL_BIN/podctl and $PODKERNEL_SRC (set by tests/run-tests.sh).
set -u
BIN=${PODKERNEL_BIN:-build/bin}
SRC=${PODKERNEL_SRC:-.}
PODCTL="$BIN/podctl"
GPU="$SRC/boards/gpu-cluster.yaml"
TPU="$SRC/boards/tpu-cube.yaml"
if [ ! -x "$PODCTL" ]; then
	echo "test_simulate_cmd: $PODCTL not built" >&2
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

cat >"$T/trace.csv" <<'CSV'
arrival,duration,pods,accelerators,cpu,memory,priority,user
0,3600,16,8,100,500Gi,,alice
10,600,1,8,10,10Gi,,bob
20,1800,64,8,100,500Gi,,carol
30,60,4,4,1,1Gi,100,dave
40,7200,200,8,1,1Gi,,erin
CSV

run 0 simulate --board "$GPU" --trace "$T/trace.csv" --strategy fit,kep --seed 3 \
	--failure-rate 0.3 -o "$T/a.json"
check "two strategies, JSON file (rc=$rc)" $?
grep -q "^report: $T/a.json" "$T/out"
check "the summary names the report" $?
grep -q "events/s" "$T/err"
check "events per second on stderr" $?
python3 - "$T/a.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
runs = d["runs"]
assert d["kind"] == "SimulationReport" and len(runs) == 2, d.keys()
assert [r["strategy"] for r in runs] == ["fit", "kep"]
for r in runs:
    assert r["jobs"]["total"] == 5 and r["hosts"] == 64 and r["accelerators"] == 512
    assert r["jobs"]["never_placed"] == 1 and r["never_placed_jobs"][0]["pods"] == 200
    assert {q["gang"] for q in r["queueing_delay"]} >= {"all", "1", "2-8", "33-128"}
    assert len(r["series"]["t"]) == len(r["series"]["allocated"]) > 1
    for q in r["queueing_delay"]:
        c = q["cdf"]
        assert len(c) == 21 and c == sorted(c) and c[-1] == q["max"], q
p = d["provenance"]
assert p["seed"] == 3 and p["trace"].endswith("trace.csv") and p["version"], p
assert "--failure-rate" in p["flags"] and "-o" not in p["flags"], p
PY
check "the report holds both runs, never placed, delays, series" $?
run 0 simulate --board "$GPU" --trace "$T/trace.csv" --strategy fit,kep --seed 3 \
	--failure-rate 0.3 -o "$T/b.json"
cmp -s "$T/a.json" "$T/b.json"
check "same trace, board and seed: byte-identical JSON" $?

run 0 simulate --board "$GPU" --board "$TPU" --trace "$T/trace.csv" -o "$T/r.html" \
	--node-loss 100:gpu-b0-r0-n0
check "two boards, HTML (rc=$rc)" $?
[ "$(grep -c '<svg' "$T/r.html")" -ge 6 ] && ! grep -qE '<script|src=|href=' "$T/r.html"
check "the page draws both boards' charts and loads nothing" $?
grep -q "not on this board" "$T/err"
check "a node loss of the other board is said to be ignored" $?

run 0 simulate --board "$GPU" --trace "$T/trace.csv" -o json
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/out"
check "-o json writes the document to stdout" $?

printf 'arrival,duration,cpu\n0,10,1\n5,10,lots\n' >"$T/bad.csv"
run 2 simulate --board "$GPU" --trace "$T/bad.csv"
check "an invalid value exits 2 (rc=$rc)" $?
grep -q 'line 3: column cpu' "$T/err"
check "the error names line and column" $?
run 2 simulate --board "$GPU" --trace "$T/trace.csv" --strategy nope
check "an unknown strategy exits 2 (rc=$rc)" $?
run 2 simulate --trace "$T/trace.csv"
check "--board is required (rc=$rc)" $?
run 2 simulate --board "$T/missing.yaml" --trace "$T/trace.csv"
check "a missing board exits 2 (rc=$rc)" $?
run 2 simulate --board "$GPU" --trace "$T/trace.csv" --until soon
check "a bad --until exits 2 (rc=$rc)" $?

# --levels: the comparison bench_quality draws, in each run's report.  The
# trace requests 5,136 of 512 GPUs: every level is reached after the first jobs.
run 0 simulate --board "$GPU" --trace "$T/trace.csv" --strategy fit,kep --levels 25,50,100 \
	-o "$T/l.json"
check "--levels (rc=$rc)" $?
grep -q "25% requested: .*% allocated, 50% requested: .*(nothing departing)" "$T/out"
check "the summary gives the allocation at each level" $?
python3 - "$T/l.json" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
for r in runs:
    lv = r["levels"]
    assert [l["arrived_percent"] for l in lv] == [25, 50, 100], lv
    # 16x8 then 1x8 then 64x8 arrive: 128, 136, 648 GPUs requested; the 64-host
    # gang does not fit beside the first job, so allocation stays at 136 of 512
    assert [l["allocated_ratio"] for l in lv] == [0.25, 0.2656, 0.2656], lv
    assert [l["allocated"] for l in lv] == [128, 136, 136], lv
PY
check "allocated at each level, a gang that does not fit left out" $?
# A trace's pods in all are capped (1.3 KB of CSV asking for 4 M pods would
# take gigabytes); --max-total-pods raises or lowers the cap.
{
	echo "arrival,duration,pods"
	i=0
	while [ $i -lt 40 ]; do echo "$i,10,100000"; i=$((i + 1)); done
} >"$T/huge.csv"
run 2 simulate --board "$GPU" --trace "$T/huge.csv"
check "a trace of 4000000 pods exits 2 (rc=$rc)" $?
grep -q '4000000 pods in all, more than --max-total-pods 1000000' "$T/err"
check "the refusal names the pods and the cap" $?
run 2 simulate --board "$GPU" --trace "$T/trace.csv" --max-total-pods 100
check "--max-total-pods below the trace's 285 pods exits 2 (rc=$rc)" $?
run 0 simulate --board "$GPU" --trace "$T/trace.csv" --max-total-pods 285 -o json
check "--max-total-pods at the trace's pods runs (rc=$rc)" $?
run 2 simulate --board "$GPU" --trace "$T/trace.csv" --max-total-pods -1
check "a bad --max-total-pods exits 2 (rc=$rc)" $?
run 2 simulate --board "$GPU" --trace "$T/trace.csv" --levels 110,100
check "--levels must ascend (rc=$rc)" $?

# OpenB node and pod lists (the production GPU trace's format): gpu_spec is
# required node affinity on the model label, gpu_milli under 1000 a share of
# one GPU; --inflate draws until the requests reach F times the cluster's.
cat >"$T/nodes.csv" <<'CSV'
sn,cpu_milli,memory_mib,gpu,model
n-a,64000,262144,2,T4
n-b,96000,393216,8,V100M32
CSV
cat >"$T/pods.csv" <<'CSV'
name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
p0,8000,16384,1,1000,T4,LS,Running,0,100,0
p1,4000,8192,1,500,,LS,Running,35,,35
p2,4000,8192,1,250,T4|T4,BE,Running,20,,20
p3,32000,65536,8,1000,V100M32,LS,Running,30,,30
p4,2000,4096,0,0,,BE,Running,40,,40
CSV
run 0 simulate --nodes "$T/nodes.csv" --trace "$T/pods.csv" --levels 50,100 -o "$T/o.json" \
	--bindings "$T/o.bind"
check "an OpenB trace replays (rc=$rc)" $?
python3 - "$T/o.json" "$T/o.bind" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
bind = dict(l.split() for l in open(sys.argv[2]))
assert run["accelerators"] == 10 and run["hosts"] == 2, run
# the T4 pods on the T4 node, the 8-GPU V100 pod on the V100 node
assert bind["t0/p0"] == "n-a" and bind["t2/p0"] == "n-a" and bind["t3/p0"] == "n-b", bind
assert bind["t1/p0"] == "n-a", bind  # the share beside the other, on the T4 node
# 1 + 0.25 + 8 requested of 10 reach 50%; with 0.5 more, 100% is never reached
lv = run["levels"]
assert [l["arrived_percent"] for l in lv] == [50, 100], lv
assert lv[0]["allocated"] == 9.25 and lv[1]["allocated"] == 9.75, lv
assert run["jobs"]["completed"] == 1, run["jobs"]  # p0 leaves at its deletion_time
PY
check "OpenB: models, shares, levels and deletion times" $?
run 0 simulate --nodes "$T/nodes.csv" --trace "$T/pods.csv" --inflate 1.3 --seed 7 -o "$T/i1.json"
run 0 simulate --nodes "$T/nodes.csv" --trace "$T/pods.csv" --inflate 1.3 --seed 7 -o "$T/i2.json"
cmp -s "$T/i1.json" "$T/i2.json"
check "--inflate with a seed is reproducible" $?
python3 - "$T/i1.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
assert run["jobs"]["total"] >= 2 and run["jobs"]["completed"] == 0, run["jobs"]
PY
check "--inflate: pods drawn to 130% of the GPUs, none leaving" $?
run 2 simulate --nodes "$T/nodes.csv" --trace "$T/pods.csv" --inflate 50 --max-total-pods 10
check "--inflate past --max-total-pods exits 2 (rc=$rc)" $?
grep -q "more than 10 pods (--max-total-pods raises the limit)" "$T/err"
check "the pod cap says how to raise it" $?
printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\nq,1000,1,2,500,\n' >"$T/bad.csv"
run 2 simulate --nodes "$T/nodes.csv" --trace "$T/bad.csv"
check "a share on a multi-GPU pod exits 2 (rc=$rc)" $?
grep -q "line 2: column gpu_milli" "$T/err"
check "the error names the line and column" $?
run 2 simulate --board "$GPU" --trace "$T/trace.csv" --inflate 1.3
check "--inflate needs --nodes (rc=$rc)" $?
exit $fail
