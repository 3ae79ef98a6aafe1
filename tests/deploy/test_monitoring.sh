#!/bin/sh
# deploy/monitoring: every metric the Grafana dashboard queries is one a
# running podkerneld serves (standalone with a board, so the scheduler's
# metrics are there, and the placement map's), and the ServiceMonitor
# selects the Service of both appliance bases (deploy/standalone,
# deploy/scheduler) on a port they name.
set -eu
: "${PODKERNEL_SRC:?}" "${PODKERNEL_BIN:?}"
. "$PODKERNEL_SRC/tests/need.sh"
need_tool curl python3
python3 -c 'import yaml' 2>/dev/null || { echo "FAIL: python3-yaml is not installed (make deps)" >&2; exit 1; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/podkernel-monitoring.XXXXXX")
PID=""
trap '[ -n "$PID" ] && kill "$PID" 2>/dev/null; rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$PODKERNEL_SRC"

"$PODKERNEL_BIN/podkerneld" --listen 127.0.0.1:0 --data-dir "$WORK/data" \
	--simulate-board boards/tpu-cube.yaml 2>"$WORK/log" &
PID=$!
port=""
for _ in $(seq 1 100); do
	grep -q "scheduling loop running" "$WORK/log" &&
		port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$WORK/log" | head -1) && [ -n "$port" ] && break
	kill -0 "$PID" 2>/dev/null || { cat "$WORK/log"; fail "podkerneld exited"; }
	sleep 0.1
done
[ -n "$port" ] || fail "podkerneld did not start"
curl -sf "http://127.0.0.1:$port/metrics" >"$WORK/metrics" || fail "GET /metrics"
python3 - deploy/monitoring/podkernel-dashboard.json "$WORK/metrics" <<'PY'
import json, re, sys
dash = json.load(open(sys.argv[1]))
lines = open(sys.argv[2]).read().splitlines()
served = {l.split("{")[0].split(" ")[0] for l in lines if l[:1].isalpha()}
types = {l.split()[2]: l.split()[3] for l in lines if l.startswith("# TYPE ")}
served |= set(types)  # a family declared but without samples yet (no bound pod)
served |= {n + "_bucket" for n, t in types.items() if t == "histogram"}
exprs = [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]
assert exprs, "no queries"
words = set()
for e in exprs:
    e = re.sub(r'"[^"]*"', '""', e)          # label values
    e = re.sub(r"\{[^}]*\}", "", e)          # label matchers
    e = re.sub(r"\[[^\]]*\]", "", e)         # ranges
    e = re.sub(r"\b(by|without)\s*\([^)]*\)", "", e)
    for m in re.finditer(r"[a-zA-Z_:][a-zA-Z0-9_:]*", e):
        if not re.match(r"\s*\(", e[m.end():]):  # a function's name
            words.add(m.group(0))
missing = sorted(w for w in words if w not in served and w not in ("le",))
assert not missing, "the dashboard queries metrics podkerneld does not serve: %s" % missing
print("dashboard: %d queries, %d metrics, all served" % (len(exprs), len(words)))
PY
python3 - deploy/monitoring/servicemonitor.yaml <<'PY' || fail "ServiceMonitor"
import subprocess, sys, yaml
sm = yaml.safe_load(open(sys.argv[1]))
assert sm["kind"] == "ServiceMonitor" and sm["apiVersion"] == "monitoring.coreos.com/v1"
want = sm["spec"]["selector"]["matchLabels"]
ports = {e["port"] for e in sm["spec"]["endpoints"]}
for base in ("deploy/standalone", "deploy/scheduler"):
    out = subprocess.run(["kubectl", "kustomize", base], capture_output=True, text=True)
    assert out.returncode == 0, "kubectl kustomize %s: %s" % (base, out.stderr.strip())
    svcs = [d for d in yaml.safe_load_all(out.stdout) if d and d["kind"] == "Service"]
    hit = [s for s in svcs if all(s["metadata"].get("labels", {}).get(k) == v for k, v in want.items())
           and s["metadata"].get("namespace") in sm["spec"]["namespaceSelector"]["matchNames"]]
    assert hit, "%s: no Service the ServiceMonitor selects" % base
    assert all(ports & {p.get("name") for p in s["spec"]["ports"]} for s in hit), base
PY
echo "test_monitoring: the dashboard's metrics are served; the ServiceMonitor selects podkerneld"
