#!/bin/sh
# Publishing to a local API server (fake_apiserver.py): merge patch of the
# node's labels with a stale owned label removed and foreign labels kept (also
# one whose key the agent computes: a provider's label is never overwritten),
# retries through 503s, a missing Node an error (created with POST only with
# --register-node), the daemon's Lease renewals with bearer token rotation
# and no Node write while nothing changes, and an unreachable server
# (retries with backoff, then exit 1).
set -u
: "${PODKERNEL_BIN:?}" "${PODKERNEL_SRC:?}"
AGENT=$PODKERNEL_BIN/podagent
XML=$PODKERNEL_SRC/tests/fixtures/hwloc/power8gpudistances.xml
. "$PODKERNEL_SRC/tests/need.sh"
need_file "$XML"
need_tool python3 openssl
tmp=$(mktemp -d) || exit 1
srv=
apid=
cleanup() {
	[ -n "$apid" ] && kill "$apid" 2>/dev/null
	[ -n "$srv" ] && kill "$srv" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail=0
AG="--no-udev --no-netlink --hwloc-xml $XML --backoff-ms 50 --backoff-max-ms 200"

cat >"$tmp/seed.json" <<'JSON'
[{"apiVersion": "v1", "kind": "Node",
  "metadata": {"name": "gpu-a",
    "labels": {"team": "ml", "accelerator.podkernel.dev/stale": "yes",
               "accelerator.podkernel.dev/vendor": "set-by-provider",
               "kubernetes.io/hostname": "gpu-a"},
    "annotations": {"agent.podkernel.dev/owned-labels":
                    "accelerator.podkernel.dev/stale,kubernetes.io/hostname"}},
  "status": {"capacity": {"google.com/tpu": "4", "cpu": "8"},
             "allocatable": {"google.com/tpu": "4"}}}]
JSON
echo t1 >"$tmp/token"
echo t1 >"$tmp/accepted"
python3 "$PODKERNEL_SRC/tests/agent/fake_apiserver.py" --port-file "$tmp/port" \
	--log "$tmp/log" --state "$tmp/state" --seed "$tmp/seed.json" \
	--tokens "$tmp/accepted" --fail-first 2 &
srv=$!
i=0
while [ ! -f "$tmp/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -f "$tmp/port" ] || { echo "test_publish: fake API server did not start"; exit 1; }
URL=http://127.0.0.1:$(cat "$tmp/port")

# 1. patch an existing node (labels, then status), through two 503s
"$AGENT" --once $AG --node-name gpu-a --publish "$URL" --token-file "$tmp/token" \
	--publish-status 2>"$tmp/e1"
rc=$?
[ $rc = 0 ] || { echo "patch: exit $rc"; cat "$tmp/e1"; fail=1; }
# 2. a node that does not exist is an error (the kubelet registers Nodes) ...
"$AGENT" --once $AG --node-name gpu-b --publish "$URL/" --token t1 --retries 1 2>"$tmp/e2"
rc=$?
[ $rc = 1 ] || { echo "missing node: exit $rc, expected 1"; cat "$tmp/e2"; fail=1; }
grep -q "node gpu-b not found.*--register-node" "$tmp/e2" ||
	{ echo "missing node: no message"; cat "$tmp/e2"; fail=1; }
grep -q '"method": "POST"' "$tmp/log" && { echo "missing node: created without --register-node"; fail=1; }
# ... created only with --register-node
"$AGENT" --once $AG --node-name gpu-b --publish "$URL/" --token t1 --register-node 2>"$tmp/e2"
rc=$?
[ $rc = 0 ] || { echo "create: exit $rc"; cat "$tmp/e2"; fail=1; }
# 3. a wrong token is refused: exit 1
"$AGENT" --once $AG --node-name gpu-a --publish "$URL" --token nope --retries 2 2>"$tmp/e3"
rc=$?
[ $rc = 1 ] || { echo "bad token: exit $rc, expected 1"; fail=1; }
grep -q "401" "$tmp/e3" || { echo "bad token: no HTTP 401 in the message"; cat "$tmp/e3"; fail=1; }

python3 - "$tmp/state" "$tmp/log" <<'PY' || fail=1
import json, sys
nodes = json.load(open(sys.argv[1]))
log = [json.loads(l) for l in open(sys.argv[2])]
a = nodes["gpu-a"]["metadata"]
assert a["labels"]["team"] == "ml", a            # not ours: kept
# a key the agent computes too, but someone else set: left as it is, not owned
assert a["labels"]["accelerator.podkernel.dev/vendor"] == "set-by-provider", a
assert "vendor" not in a["annotations"]["agent.podkernel.dev/owned-labels"], a
assert "accelerator.podkernel.dev/stale" not in a["labels"], a   # ours, gone: removed
assert a["labels"]["accelerator.podkernel.dev/count"] == "4", a
assert a["labels"]["numa.podkernel.dev/count"] == "2", a
assert "team" not in a["annotations"]["agent.podkernel.dev/owned-labels"], a
devs = json.loads(a["annotations"]["accelerator.podkernel.dev/devices"])
assert len(devs) == 4 and devs[0]["numaNode"] == 0, devs
assert [r["status"] for r in log[:2]] == [503, 503], log[:3]
st = nodes["gpu-a"]["status"]   # --publish-status: the agent's resources only
assert st["capacity"] == {"cpu": "16", "memory": "133796416Ki", "pods": "110",
                          "nvidia.com/gpu": "4"}, st
assert "google.com/tpu" not in st["allocatable"] and st["allocatable"]["nvidia.com/gpu"] == "4", st
assert any(r["method"] == "PATCH" and r["path"] == "/api/v1/nodes/gpu-a/status" for r in log)
patches = [r for r in log if r["method"] == "PATCH"]
assert patches and all(r["ctype"] == "application/merge-patch+json" for r in patches), patches
p = patches[0]["body"]["metadata"]["labels"]
assert p["accelerator.podkernel.dev/stale"] is None and "team" not in p, p
assert "accelerator.podkernel.dev/vendor" not in p, p
assert patches[0]["auth"] == "Bearer t1", patches[0]
assert all((r["agent"] or "").startswith("podagent/") for r in log), {r["agent"] for r in log}
b = nodes["gpu-b"]
assert any(r["method"] == "POST" and r["status"] == 201 for r in log), log
assert b["status"]["capacity"]["nvidia.com/gpu"] == "4", b
assert b["metadata"]["labels"]["accelerator.podkernel.dev/vendor"] == "nvidia", b
print("publish: ok")
PY

# 4. the daemon: a Lease renewed every interval (created at the first one),
# the Node patched once while nothing changes, and token rotation (the token
# file is re-read before every request)
: >"$tmp/log"
"$AGENT" $AG --node-name gpu-a --publish "$URL" --token-file "$tmp/token" --interval 1 \
	2>"$tmp/e4" &
apid=$!
sleep 1.5
echo t2 >"$tmp/accepted"
echo t2 >"$tmp/token"
LEASE=/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/gpu-a
i=0
while [ "$(grep -c "\"path\": \"$LEASE\", \"auth\": \"Bearer t2\", \"ctype\": \"application/merge-patch+json\", \"status\": 200" "$tmp/log")" -lt 2 ] &&
	[ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
kill -TERM $apid
wait $apid
rc=$?
apid=
[ $rc = 0 ] || { echo "rotation: daemon exit $rc"; cat "$tmp/e4"; fail=1; }
python3 - "$tmp/state.leases" "$tmp/log" "$LEASE" <<'PY' || { tail -5 "$tmp/log"; fail=1; }
import json, sys
leases = json.load(open(sys.argv[1]))
log = [json.loads(l) for l in open(sys.argv[2])]
spec = leases["kube-node-lease/gpu-a"]["spec"]
assert spec["holderIdentity"] == "gpu-a" and spec["leaseDurationSeconds"] == 40, spec
assert spec["renewTime"].endswith("Z") and len(spec["renewTime"]) == 27, spec
renewals = [r for r in log if r["path"] == sys.argv[3] and r["method"] == "PATCH"]
assert [r["status"] for r in renewals][:1] == [404], renewals[:2]   # created next
assert any(r["method"] == "POST" and r["status"] == 201 and
           r["path"] == sys.argv[3].rsplit("/", 1)[0] for r in log), log
assert sum(r["status"] == 200 and r["auth"] == "Bearer t2" for r in renewals) >= 2, renewals
node_writes = [r for r in log if r["method"] == "PATCH" and r["path"] == "/api/v1/nodes/gpu-a"]
assert len(node_writes) == 1, node_writes     # nothing changed after the first cycle
ann = node_writes[0]["body"]["metadata"]["annotations"]
assert ann["agent.podkernel.dev/heartbeat"] is None, ann   # the older signal is removed
print("daemon: ok")
PY

# 5. in-cluster: https with the service account's CA and token
if command -v openssl >/dev/null 2>&1; then
	mkdir "$tmp/sa"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
		-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
		-keyout "$tmp/tls.key" -out "$tmp/sa/ca.crt" 2>/dev/null
	echo sa-token >"$tmp/sa/token"
	echo sa-token >"$tmp/accepted"
	rm -f "$tmp/port"
	python3 "$PODKERNEL_SRC/tests/agent/fake_apiserver.py" --port-file "$tmp/port" \
		--log "$tmp/tlslog" --state "$tmp/tlsstate" --tokens "$tmp/accepted" \
		--tls-cert "$tmp/sa/ca.crt" --tls-key "$tmp/tls.key" &
	tsrv=$!
	i=0
	while [ ! -f "$tmp/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT=$(cat "$tmp/port") \
	PODAGENT_SERVICEACCOUNT_DIR="$tmp/sa" NODE_NAME=gpu-c \
		"$AGENT" --once $AG --in-cluster --register-node 2>"$tmp/e6"
	rc=$?
	kill $tsrv
	[ $rc = 0 ] || { echo "in-cluster: exit $rc"; cat "$tmp/e6"; fail=1; }
	grep -q '"path": "/api/v1/nodes", "auth": "Bearer sa-token", "ctype": "application/json", "status": 201' \
		"$tmp/tlslog" || { echo "in-cluster: node not created over https"; cat "$tmp/tlslog"; fail=1; }
	# without --in-cluster's environment it is a usage error
	env -u KUBERNETES_SERVICE_HOST "$AGENT" --once $AG --in-cluster 2>/dev/null
	[ $? = 2 ] || { echo "in-cluster outside a cluster: expected exit 2"; fail=1; }
else
	echo "test_publish: openssl is not installed (make deps installs it)"; fail=1
fi

# 6. unreachable server: 3 attempts (50 + 100 ms of backoff), then exit 1
kill $srv
wait $srv 2>/dev/null
srv=
start=$(date +%s%N)
"$AGENT" --once $AG --node-name gpu-a --publish "$URL" --retries 3 2>"$tmp/e5"
rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ $rc = 1 ] || { echo "unreachable: exit $rc, expected 1"; fail=1; }
grep -q "publishing node gpu-a failed" "$tmp/e5" || { echo "unreachable: no message"; cat "$tmp/e5"; fail=1; }
[ $ms -ge 150 ] || { echo "unreachable: gave up after $ms ms, expected backoff >= 150 ms"; fail=1; }

# 7. SIGTERM during a long backoff: the daemon stops at once, not after it
"$AGENT" $AG --node-name gpu-a --publish "$URL" --retries 10 --backoff-ms 30000 \
	--interval 3600 2>"$tmp/e6" &
apid=$!
sleep 1
start=$(date +%s%N)
kill -TERM $apid
wait $apid
rc=$?
apid=
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ $rc = 0 ] || { echo "SIGTERM in backoff: exit $rc, expected 0"; cat "$tmp/e6"; fail=1; }
[ $ms -lt 5000 ] || { echo "SIGTERM in backoff: took $ms ms"; fail=1; }
[ $fail = 0 ] && echo "test_publish: all passed"
exit $fail
