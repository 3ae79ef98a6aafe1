#!/bin/sh
# Standalone and the simulator admit alike: the queues and the trace of
# tests/fixtures/sim-queues replayed by `podctl simulate --queues` on the
# gpu-cluster board, and the same rows as suspended Jobs applied to a
# standalone podkerneld --simulate-board (same board), give the same
# admissions (Job and ClusterQueue/flavor): borrowing within the cohort, the
# borrowing limit, a gang that fits quota but no host, quota left and quota
# gone.  (tests/kernel/podctl/test_simulate_queues.sh compares podctl
# schedule on the same files.)
set -eu
. "$PODKERNEL_SRC/tests/e2e/lib.sh"
e2e_setup
BOARD="$PODKERNEL_SRC/boards/gpu-cluster.yaml"
FX="$PODKERNEL_SRC/tests/fixtures/sim-queues"
TMPDIR="$WORK" "$BIN/podctl" simulate --board "$BOARD" --trace "$FX/trace.csv" \
	--queues "$FX/queues.yaml" --admissions "$WORK/sim.adm" > /dev/null 2> "$WORK/sim.err" ||
	{ cat "$WORK/sim.err"; fail "podctl simulate"; }
awk '$1 == "0.000" { print $3, $4 }' "$WORK/sim.adm" | sort > "$WORK/sim.set"
[ "$(wc -l < "$WORK/sim.set")" -eq 2 ] || { cat "$WORK/sim.adm"; fail "simulate: 2 admissions at 0 expected"; }

e2e_start_server --simulate-board "$BOARD"
"$BIN/podctl" apply -f "$FX/queues.yaml" > /dev/null || fail "applying the queues"
"$BIN/podctl" apply -f "$FX/jobs.yaml" > /dev/null || fail "applying the Jobs"
# wait until every Job is admitted or says why it waits
for _ in $(seq 1 300); do
	"$BIN/podctl" get jobs -A -o json > "$WORK/jobs.json" 2>/dev/null || true
	python3 - "$WORK/jobs.json" > "$WORK/standalone.set" <<'PY' && break
import json, sys
items = json.load(open(sys.argv[1]))["items"]
out = []
for j in items:
    ann = j["metadata"].get("annotations", {})
    adm = ann.get("queue.podkernel.dev/admission")
    if adm:
        out.append("%s/%s %s" % (j["metadata"]["namespace"], j["metadata"]["name"], adm))
    elif "queue.podkernel.dev/pending-reason" not in ann:
        sys.exit(1)
if len(items) != 5:
    sys.exit(1)
print("\n".join(sorted(out)))
PY
	sleep 0.2
done
[ -s "$WORK/standalone.set" ] || fail "the Jobs were not all decided"
cmp -s "$WORK/sim.set" "$WORK/standalone.set" || {
	echo "simulator:"; cat "$WORK/sim.set"; echo "standalone:"; cat "$WORK/standalone.set"
	fail "standalone admits otherwise than the simulator"
}
echo "ok: standalone admits what the simulator admits ($(tr '\n' ' ' < "$WORK/sim.set"))"
