#!/bin/sh
# podctl as a client: kind aliases, apply create/configure, every output
# format, describe of a pending gang saying why, delete, top, and the exit
# codes of CONTRACT.md (2 bad usage or invalid object with its field path,
# 1 not found or no server, 401 without a token), what a failure says (a
# refused watch, an unreadable token file, an answer that is not JSON), and podkerneld refusing a
# broken --simulate-board file.  podctl reaches the server over TLS through a
# kubeconfig ($KUBECONFIG), as kubectl would.
set -eu
. "$PODKERNEL_SRC/tests/e2e/lib.sh"
e2e_setup
e2e_tls
e2e_start_server
# podctl finds the server, its CA and the token in a kubeconfig over TLS, as kubectl does
e2e_kubeconfig
URL=$PODKERNEL_SERVER
unset PODKERNEL_SERVER PODKERNEL_TOKEN PODKERNEL_CA_FILE
export KUBECONFIG="$WORK/kubeconfig" HOME="$WORK"

expect_rc() {
	want=$1
	shift
	set +e
	"$@" > "$WORK/out" 2> "$WORK/err"
	rc=$?
	set -e
	[ "$rc" -eq "$want" ] || { cat "$WORK/out" "$WORK/err"; fail "'$*' exited $rc, expected $want"; }
}

cat > "$WORK/objs.yaml" <<'EOF'
apiVersion: v1
kind: Node
metadata:
  name: n1
  labels: {topology.podkernel.dev/cube: c0, topology.podkernel.dev/coords: 0.0.0,
    topology.podkernel.dev/torus-shape: 4x4x4, topology.podkernel.dev/wraparound: "true"}
status: {allocatable: {cpu: "8", google.com/tpu: "4"}}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: batch}
value: 50
---
apiVersion: scheduling.k8s.io/v1alpha3
kind: PodGroup
metadata: {name: duo}
spec:
  workloadRef: {workloadName: duo, templateName: duo}
  schedulingPolicy: {gang: {minCount: 2}}
  schedulingConstraints: {topology: [{key: topology.podkernel.dev/cube}]}
---
apiVersion: v1
kind: Pod
metadata: {name: duo-0, labels: {app: duo}}
spec:
  schedulingGroup: {podGroupName: duo}
  containers: [{name: c, image: x, resources: {requests: {google.com/tpu: "4"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: duo-1, labels: {app: duo}}
spec:
  schedulingGroup: {podGroupName: duo}
  containers: [{name: c, image: x, resources: {requests: {google.com/tpu: "4"}}}]
EOF
expect_rc 0 podctl apply -f "$WORK/objs.yaml"
grep -q '^pod/duo-1 created$' "$WORK/out" || fail "apply did not report creation"
expect_rc 0 podctl apply -f "$WORK/objs.yaml"
grep -q '^podgroup/duo configured$' "$WORK/out" || fail "second apply did not configure"

# One 4-TPU host for a gang of two 4-TPU pods: it stays pending, and says why.
wait_for 10 sh -c "'$BIN/podctl' describe pg duo | grep -q 'PodGroupInitiallyScheduled *False'" ||
	fail "no False condition on the pending gang"
expect_rc 0 podctl describe podgroup duo
grep -q 'Pending pods:' "$WORK/out" || fail "describe does not list pending pods"
grep -q 'Unschedulable' "$WORK/out" || fail "describe does not say Unschedulable"
# the two pods wait for the same reason: one line with the count, not one per pod
grep -q '^  duo-0, duo-1 (2 pods): ' "$WORK/out" || { cat "$WORK/out"; fail "repeated reasons are not collapsed"; }
[ "$(sed -n '/^Pending pods/,$p' "$WORK/out" | grep -c '^  duo-')" = 1 ] || fail "a reason is printed per pod"

for k in po pod pods no nodes pg podgroups pc priorityclasses cpg wl jobs jobsets; do
	expect_rc 0 podctl get "$k" -A
done
expect_rc 0 podctl get pods -l app=duo -o json
grep -q '"duo-0"' "$WORK/out" || fail "label selector lost duo-0"
expect_rc 0 podctl get pod duo-0 -o yaml
grep -q '^kind: Pod$' "$WORK/out" || fail "-o yaml of one pod"
expect_rc 0 podctl get nodes -o wide
grep -q 'c0/n1' "$WORK/out" || fail "wide node topology column"
expect_rc 0 podctl top
grep -q '^cube  *c0 ' "$WORK/out" || grep -q '^cube  *(1 more' "$WORK/out" || fail "top has no cube level"
grep -Eq '^(coords|torus-shape|wraparound) ' "$WORK/out" && fail "top shows per-host geometry labels as levels"
# --level keeps one level (by name or label key); an unknown one names those there are
expect_rc 0 podctl top --level cube
grep -q '^cube ' "$WORK/out" || fail "top --level cube has no cube rows"
grep -q '^host ' "$WORK/out" && fail "top --level cube shows the host level"
expect_rc 0 podctl top --level topology.podkernel.dev/cube
grep -q '^cube ' "$WORK/out" || fail "top --level by label key"
expect_rc 2 podctl top --level rack
grep -q 'no such level; the nodes have: cube host' "$WORK/err" || fail "unknown level: $(cat "$WORK/err")"
expect_rc 0 podctl describe podgroup duo
grep -Eq '^  (coords|torus-shape|wraparound) ' "$WORK/out" && fail "describe shows geometry labels as levels"

# Several kinds at once, as kubectl prints them: a table per kind with its
# header, a blank line between, names prefixed by kind[.group]/.
expect_rc 0 podctl get pods,pg
sed -n 1p "$WORK/out" | grep -q '^NAME  *STATUS  *NODE  *GROUP  *AGE$' || fail "pods,pg: no pod header: $(cat "$WORK/out")"
grep -q '^pod/duo-0  ' "$WORK/out" || fail "pods,pg: pod names lack pod/"
grep -q '^podgroup.scheduling.k8s.io/duo  ' "$WORK/out" || fail "pods,pg: group names lack kind.group/"
[ "$(sed -n 4p "$WORK/out")" = "" ] || fail "pods,pg: no blank line between the tables"
sed -n 5p "$WORK/out" | grep -q '^NAME  *POLICY  *TOPOLOGY' || fail "pods,pg: no group header"
expect_rc 0 podctl get pods
grep -q '^duo-0 ' "$WORK/out" || fail "one kind: names are prefixed"
expect_rc 2 podctl get pods,flavours
grep -q "unknown kind 'flavours'" "$WORK/err" || fail "pods,flavours: $(cat "$WORK/err")"
expect_rc 2 podctl get pods,pg -w

# -o jsonpath: kubectl's templates, no newline added; a list is a List
expect_rc 0 podctl get pods -o 'jsonpath={.items[*].metadata.name}'
[ "$(cat "$WORK/out")" = "duo-0 duo-1" ] || fail "jsonpath items[*]: '$(cat "$WORK/out")'"
expect_rc 0 podctl get pod duo-0 -o=jsonpath='{.spec.schedulingGroup.podGroupName}'
[ "$(cat "$WORK/out")" = "duo" ] || fail "jsonpath of one object: '$(cat "$WORK/out")'"
expect_rc 0 podctl get pods,pg -o jsonpath='{range .items[*]}{.kind}/{.metadata.name}{"\n"}{end}'
printf 'Pod/duo-0\nPod/duo-1\nPodGroup/duo\n' | cmp -s - "$WORK/out" || fail "jsonpath range over pods,pg: $(cat "$WORK/out")"
expect_rc 0 podctl get pods -o jsonpath='{.items[?(@.metadata.name=="duo-1")].spec.containers[0].resources.requests.google\.com/tpu}'
[ "$(cat "$WORK/out")" = "4" ] || fail "jsonpath filter: '$(cat "$WORK/out")'"
# the README's example: the pods still Pending (created so), and describe's phase and QoS class
expect_rc 0 podctl get pods -o jsonpath='{.items[?(@.status.phase=="Pending")].metadata.name}'
[ "$(cat "$WORK/out")" = "duo-0 duo-1" ] || fail "jsonpath on status.phase: '$(cat "$WORK/out")'"
expect_rc 0 podctl describe pod duo-0
grep -q '^Status: *Pending$' "$WORK/out" && grep -q '^QoS Class: *BestEffort$' "$WORK/out" ||
	fail "describe pod: $(cat "$WORK/out")"
expect_rc 2 podctl get pods -o 'jsonpath={.items[}'
grep -q 'error parsing jsonpath {.items\[}' "$WORK/err" || fail "bad jsonpath: $(cat "$WORK/err")"
expect_rc 2 podctl get pods -o 'jsonpath={range .items[*]}'
grep -q 'range without end' "$WORK/err" || fail "range without end: $(cat "$WORK/err")"
expect_rc 2 podctl get pods -o jsonpath=
# -w with a template: each event's object through it (the watch starts with the pods there are)
set +e
timeout 3 "$BIN/podctl" get pods -w -o 'jsonpath={.metadata.name}{"\n"}' > "$WORK/out" 2> "$WORK/err"
set -e
grep -qx 'duo-0' "$WORK/out" && grep -qx 'duo-1' "$WORK/out" || fail "watch with jsonpath: $(cat "$WORK/out" "$WORK/err")"
set +e
timeout 3 "$BIN/podctl" get pods -w -o custom-columns=POD:.metadata.name > "$WORK/out" 2> "$WORK/err"
set -e
[ "$(grep -c '^POD' "$WORK/out")" = 1 ] && grep -q '^duo-1 *$' "$WORK/out" || fail "watch with custom-columns: $(cat "$WORK/out" "$WORK/err")"
# -o custom-columns: kubectl's layout (cells padded by 3, at least 6 wide), <none> for nothing
expect_rc 0 podctl get pods -o custom-columns=NAME:.metadata.name,GROUP:spec.schedulingGroup.podGroupName,K:.kind,NODE:{.spec.nodeName}
printf 'NAME    GROUP   K     NODE\nduo-0   duo     Pod   <none>\nduo-1   duo     Pod   <none>\n' > "$WORK/want"
cmp -s "$WORK/want" "$WORK/out" || { diff "$WORK/want" "$WORK/out"; fail "custom-columns layout"; }
expect_rc 0 podctl get pods,pg -o custom-columns=KIND:.kind,LABELS:.metadata.labels
grep -q '^Pod        map\[app:duo\]$' "$WORK/out" || fail "custom-columns map value: $(cat "$WORK/out")"
grep -q '^PodGroup   <none>$' "$WORK/out" || fail "custom-columns over pods,pg: $(cat "$WORK/out")"
[ "$(grep -c '^KIND' "$WORK/out")" = 1 ] || fail "custom-columns over two kinds: one header"
expect_rc 2 podctl get pods -o custom-columns=NAME
grep -q 'expected <header>:<json-path-expr>' "$WORK/err" || fail "bad custom-columns: $(cat "$WORK/err")"

# Exit codes.
expect_rc 2 podctl get
expect_rc 2 podctl get flavours
expect_rc 2 podctl get pods -o table
expect_rc 1 podctl get pod nosuch
expect_rc 1 podctl delete pod nosuch
cat > "$WORK/bad.yaml" <<'EOF'
apiVersion: scheduling.k8s.io/v1alpha3
kind: PodGroup
metadata: {name: bad}
spec:
  schedulingPolicy: {gang: {minCount: -3}}
EOF
expect_rc 2 podctl apply -f "$WORK/bad.yaml"
grep -q 'minCount' "$WORK/err" || fail "invalid object error lacks the field path"
printf 'kind: Pod\n  bad: [\n' > "$WORK/broken.yaml"
expect_rc 2 podctl apply -f "$WORK/broken.yaml"
grep -q 'broken.yaml:[0-9]*:[0-9]*' "$WORK/err" || fail "syntax error lacks FILE:LINE:COL"
expect_rc 1 env KUBECONFIG= "$BIN/podctl" --server "$URL" --certificate-authority "$E2E_CA" get pods
grep -q '401' "$WORK/err" || fail "no 401 without a token"
expect_rc 1 podctl --server http://127.0.0.1:1 get pods
grep -q 'cannot reach' "$WORK/err" || fail "no connection message"
# a refused watch says why (the server's Status), not only that it ended
expect_rc 1 env KUBECONFIG= "$BIN/podctl" --server "$URL" --certificate-authority "$E2E_CA" get pods -w -o json
grep -q 'watch: Unauthorized (HTTP 401)' "$WORK/err" || fail "refused watch: $(cat "$WORK/err")"
# a token file that cannot be read is named, and nothing is sent (client-go refuses it too)
sed "s|token: $ADMIN_TOKEN|tokenFile: $WORK/no-such-token|" "$WORK/kubeconfig" > "$WORK/kc-tokenfile"
grep -q 'tokenFile:' "$WORK/kc-tokenfile" || fail "test kubeconfig has no token to replace"
expect_rc 1 podctl --kubeconfig "$WORK/kc-tokenfile" get pods -o json
grep -q "token file $WORK/no-such-token: No such file or directory" "$WORK/err" ||
	fail "unreadable token file: $(cat "$WORK/err")"
grep -q 'cannot reach' "$WORK/err" && fail "an unreadable token file reads as an unreachable server"
# an answer that is not JSON (a proxy's page) says what it was
need_python
python3 -c '
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        b = b"<html>bad gateway</html>"
        self.send_response(int(self.path.endswith("watch=1")) and 502 or 200)
        self.send_header("Content-Type", "text/html"); self.send_header("Content-Length", str(len(b)))
        self.end_headers(); self.wfile.write(b)
    def log_message(self, *a): pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1] + ".tmp", "w").write(str(s.server_port)); __import__("os").rename(sys.argv[1] + ".tmp", sys.argv[1])
s.serve_forever()' "$WORK/html.port" &
E2E_PIDS="$E2E_PIDS $!"
wait_for 10 test -s "$WORK/html.port" || fail "no HTML server"
HTML=http://127.0.0.1:$(cat "$WORK/html.port")
expect_rc 1 podctl --server "$HTML" get pods -o json
grep -q 'pods: the answer is not JSON (text/html, 24 bytes: <html>bad gateway</html>) (HTTP 200)' "$WORK/err" ||
	fail "non-JSON answer: $(cat "$WORK/err")"
expect_rc 1 podctl --server "$HTML" get pods -w -o json
grep -q 'watch: the answer is not JSON: <html>bad gateway</html> (HTTP 502)' "$WORK/err" ||
	fail "non-JSON watch refusal: $(cat "$WORK/err")"

# A broken board file stops podkerneld with FILE:LINE:COL and exit 2.
printf 'apiVersion: podkernel.dev/v1alpha1\nkind: Board\nlevels: [\n' > "$WORK/board.yaml"
expect_rc 2 "$BIN/podkerneld" --listen 127.0.0.1:0 --data-dir "$WORK/data2" \
	--simulate-board "$WORK/board.yaml"
grep -q 'board.yaml:[0-9]*:[0-9]*:' "$WORK/err" || fail "board error lacks FILE:LINE:COL"

expect_rc 0 podctl delete pod duo-1
grep -q 'pod "duo-1" deleted' "$WORK/out" || fail "delete message"
echo "ok"
