#!/bin/sh
# bench_offline_memory.sh BUILD — peak memory of `podctl schedule` on a whole
# cluster dump, per object.  Input: the 65,536 Nodes of
# `podctl board nodes boards/tpu-superslice.yaml --superslices 256` (one JSON
# file of about 70 MB, or the same Nodes split into 16 files) and 1,024
# cube gangs of 16 pods (17,408 objects).  Floor: `podctl validate` of the
# one-file input, which holds the parsed input of that file and nothing else.
# Medians of RUNS (default 3) runs each; peak RSS is the child's ru_maxrss.
set -eu
BUILD=${1:-build/bench}
BIN=$(cd "$BUILD/bin" && pwd)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
RUNS=${RUNS:-3}
command -v python3 > /dev/null 2>&1 || { echo "bench_offline_memory: python3 is not installed (make deps)" >&2; exit 1; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/podkernel-bench-mem.XXXXXX")
trap 'rm -rf "$WORK"' EXIT INT TERM

"$BIN/podctl" board nodes "$SRC/boards/tpu-superslice.yaml" --superslices 256 > "$WORK/nodes.json"
python3 - "$WORK/pods.json" <<'PY'
import json, sys
items = []
for g in range(1024):
    items.append({"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "PodGroup",
                  "metadata": {"name": "g%d" % g},
                  "spec": {"workloadRef": {"workloadName": "w%d" % g, "templateName": "t"},
                           "schedulingPolicy": {"gang": {"minCount": 16}},
                           "schedulingConstraints": {"topology": [{"key": "topology.podkernel.dev/cube"}]}}})
    for p in range(16):
        items.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "g%d-p%d" % (g, p)},
                      "spec": {"schedulingGroup": {"podGroupName": "g%d" % g},
                               "containers": [{"name": "c", "image": "x", "resources":
                                               {"requests": {"google.com/tpu": "4", "cpu": "8"}}}]}})
json.dump({"apiVersion": "v1", "kind": "List", "items": items}, open(sys.argv[1], "w"))
PY
python3 - "$WORK" <<'PY'
import json, os, sys
nodes = json.load(open(os.path.join(sys.argv[1], "nodes.json")))["items"]
n = len(nodes) // 16
for k in range(16):
    json.dump({"apiVersion": "v1", "kind": "List", "items": nodes[k * n:(k + 1) * n]},
              open(os.path.join(sys.argv[1], "nodes-%02d.json" % k), "w"))
PY

python3 - "$BIN/podctl" "$WORK" "$RUNS" <<'PY'
import os, resource, statistics, subprocess, sys, time
podctl, work, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
pods = ["-f", os.path.join(work, "pods.json")]
files = ["-f", os.path.join(work, "nodes.json")] + pods
split = sum((["-f", os.path.join(work, "nodes-%02d.json" % k)] for k in range(16)), []) + pods

def peak(args):
    """Peak RSS (KiB) and wall time of one podctl run, in a fresh child."""
    pid = os.fork()
    if pid == 0:
        out = os.open(os.devnull, os.O_WRONLY)
        os.dup2(out, 1)
        os.execv(podctl, [podctl] + args)
    t = time.monotonic()
    _, status, usage = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("podctl %s failed" % args[0])
    return usage.ru_maxrss, time.monotonic() - t

objects = 65536 + 1024 * 17
rows = []
for name, args in (("validate (floor)", ["validate"] + files), ("schedule", ["schedule"] + files),
                   ("schedule, 16 files", ["schedule"] + split)):
    res = [peak(args) for _ in range(runs)]
    rows.append((name, statistics.median(r[0] for r in res), statistics.median(r[1] for r in res)))
floor = rows[0][1]
print("%-20s %10s %12s %8s %8s" % ("command", "peak MiB", "KiB/object", "ratio", "wall s"))
for name, kb, wall in rows:
    print("%-20s %10.0f %12.2f %8.2f %8.2f" % (name, kb / 1024, kb / objects, kb / floor, wall))
print("%d objects (65,536 Nodes, 1,024 gangs of 16 pods), medians of %d runs" % (objects, runs))
PY
