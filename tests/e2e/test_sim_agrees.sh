#!/bin/sh
# The appliance agrees with the simulator: a small trace replayed by
# `podctl simulate` on the tpu-cube board, and the same trace fed at its
# arrival times to a standalone podkerneld --simulate-board (same board) with
# the simulated pod lifecycle on, give the same bindings (pod and node) in the
# same order.  The trace contends: a gang waits for another's hosts to free,
# a single pod slips into the hosts left, a second gang waits behind it.
# Events are at least 3 s apart, so the wall clock's jitter (a sanitizer
# build on a loaded machine included) cannot reorder them.
set -eu
. "$PODKERNEL_SRC/tests/e2e/lib.sh"
e2e_setup
BOARD="$PODKERNEL_SRC/boards/tpu-cube.yaml"
cat > "$WORK/trace.csv" <<'CSV'
arrival,duration,pods,accelerators,cpu
0,12,12,4,8
3,6,8,4,8
6,15,1,4,8
9,6,4,4,8
CSV
"$BIN/podctl" simulate --board "$BOARD" --trace "$WORK/trace.csv" --bindings "$WORK/sim.txt" \
	> /dev/null 2> "$WORK/sim.err" || { cat "$WORK/sim.err"; fail "podctl simulate"; }
[ "$(wc -l < "$WORK/sim.txt")" -eq 25 ] || { cat "$WORK/sim.txt"; fail "simulate: 25 bindings expected"; }

e2e_start_server --simulate-board "$BOARD" --sim-lifecycle -v 2
python3 - "$WORK/trace.csv" "$BIN/podctl" "$WORK" <<'PY' || fail "feeding the trace"
import csv, json, subprocess, sys, time
trace, podctl, work = sys.argv[1:4]
rows = list(csv.DictReader(open(trace)))
t0 = time.monotonic()
for j, r in enumerate(rows):
    ns, pods = "t%d" % j, int(r["pods"])
    objs = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}]
    if pods > 1:
        objs.append({"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "PodGroup",
                     "metadata": {"name": "g", "namespace": ns},
                     "spec": {"workloadRef": {"workloadName": "g", "templateName": "g"},
                              "schedulingPolicy": {"gang": {"minCount": pods}}}})
    for k in range(pods):
        spec = {"containers": [{"name": "c", "image": "sim", "resources": {"requests": {
            "google.com/tpu": r["accelerators"], "cpu": r["cpu"]}}}]}
        if pods > 1:
            spec["schedulingGroup"] = {"podGroupName": "g"}
        objs.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": "p%0*d" % (len(str(pods - 1)), k), "namespace": ns,
                                  "annotations": {
                         "sim.podkernel.dev/duration": r["duration"]}}, "spec": spec})
    path = "%s/job%d.json" % (work, j)
    json.dump({"apiVersion": "v1", "kind": "List", "items": objs}, open(path, "w"))
    delay = float(r["arrival"]) - (time.monotonic() - t0)
    if delay > 0:
        time.sleep(delay)
    subprocess.run([podctl, "apply", "-f", path], check=True, stdout=subprocess.DEVNULL)
PY
# wait until every binding the simulator made happened here too
for _ in $(seq 1 600); do
	sed -n 's/.*bound pod \([^ ]*\) to node \([^ ]*\).*/\1 \2/p' "$WORK/podkerneld.log" > "$WORK/appliance.txt"
	[ "$(wc -l < "$WORK/appliance.txt")" -ge 25 ] && break
	sleep 0.1
done
if ! cmp -s "$WORK/sim.txt" "$WORK/appliance.txt"; then
	diff "$WORK/sim.txt" "$WORK/appliance.txt" >&2 || true
	fail "the appliance bound differently from the simulator"
fi
grep -q "lifecycle: pod t0/p00 Succeeded" "$WORK/podkerneld.log" || fail "no simulated pod ended"
echo "ok"
