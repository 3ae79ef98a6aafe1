# Shared by test_kubectl_semantics.sh and test_kubectl_semantics_stand_in.sh
# (sourced): kubectl 1.32 and Debian's python3-kubernetes against podkerneld,
# asserting kube-apiserver's behaviour for the calls operators make daily.
# MODE is "standalone" (podkerneld schedules) or "stand-in" (--no-scheduling,
# the cluster attach mode talks to: the test binds pods itself).
. "$PODKERNEL_SRC/tests/e2e/lib.sh"
need_tool kubectl
need_tool curl
e2e_setup
echo 'viewtok,viewer,uid-viewer,"team-a"' >> "$WORK/tokens.csv"
e2e_tls
if [ "$MODE" = stand-in ]; then e2e_start_server --no-scheduling; else e2e_start_server; fi
e2e_kubeconfig
api() { curl -s --cacert "$WORK/cert.pem" -H "Authorization: Bearer $ADMIN_TOKEN" "$@"; }

kc apply -f - > /dev/null <<'Y' || fail "node"
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  capacity: {cpu: "8", memory: 16Gi, pods: "110"}
  allocatable: {cpu: "8", memory: 16Gi, pods: "110"}
  conditions: [{type: Ready, status: "True"}]
Y

# --- kubectl wait: the binding does not bump metadata.generation ---------------
kc run m0 --image=busybox --restart=Never > /dev/null || fail "kubectl run"
if [ "$MODE" = stand-in ]; then
	api -X POST -H 'Content-Type: application/json' \
		-d '{"apiVersion":"v1","kind":"Binding","metadata":{"name":"m0"},"target":{"name":"n1"}}' \
		"$PODKERNEL_SERVER/api/v1/namespaces/default/pods/m0/binding" | grep -q Success ||
		fail "binding"
fi
kc wait --for=condition=PodScheduled pod/m0 --timeout=15s > /dev/null ||
	fail "kubectl wait --for=condition=PodScheduled timed out"
[ "$(kc get pod m0 -o jsonpath='{.metadata.generation}')" = 1 ] || fail "the binding bumped the generation"

# --- a bound pod's spec: nodeName and requests cannot change, the image can ----
kc patch pod m0 --type=merge -p '{"spec":{"nodeName":"n2"}}' 2> "$WORK/err" && fail "nodeName patched"
grep -q 'spec.nodeName: Forbidden' "$WORK/err" || fail "nodeName refusal: $(cat "$WORK/err")"
kc patch pod m0 --type=json -p '[{"op":"add","path":"/spec/containers/0/resources","value":{"requests":{"cpu":"64"}}}]' \
	2> "$WORK/err" && fail "requests patched"
grep -q 'pod updates may not change fields other than' "$WORK/err" || fail "requests refusal"
kc set image pod/m0 m0=busybox:2 > /dev/null || fail "kubectl set image"
[ "$(kc get pod m0 -o jsonpath='{.metadata.generation}')" = 2 ] || fail "an image edit keeps the generation"
if [ "$MODE" = standalone ]; then
	# the scheduler's condition follows the new generation
	kc wait --for=condition=PodScheduled pod/m0 --timeout=15s > /dev/null ||
		fail "PodScheduled did not observe generation 2"
fi
echo "ok: pod semantics, kubectl wait"

# --- Events: kubectl describe explains a binding and a pending pod ---------------
if [ "$MODE" = standalone ]; then
	kc run stuck --image=busybox --restart=Never --overrides='{"spec":{"nodeSelector":{"disk":"ssd"}}}' \
		> /dev/null || fail "kubectl run stuck"
	describe_has() { kc describe pod "$1" | grep -q "$2"; }
	wait_for 15 describe_has stuck 'Warning *FailedScheduling .*node selector' ||
		fail "describe pending: $(kc describe pod stuck)"
	wait_for 15 describe_has m0 'Normal *Scheduled .*Successfully assigned default/m0 to n1' ||
		fail "describe bound: $(kc describe pod m0)"
	kc get events --field-selector reason=Scheduled -o name | grep -q . || fail "kubectl get events"
	kc delete pod stuck --wait=false > /dev/null
	echo "ok: Events in kubectl describe and get events"
fi

# --- kubectl delete --cascade=orphan keeps the dependents, without the reference --
kc apply -f - > /dev/null <<'Y' || fail "job"
apiVersion: batch/v1
kind: Job
metadata: {name: hello}
spec:
  parallelism: 2
  completions: 2
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
Y
uid=$(kc get job hello -o jsonpath='{.metadata.uid}')
if [ "$MODE" = stand-in ]; then
	# no Job controller here: the dependent is written as one would
	kc apply -f - > /dev/null <<Y || fail "dependent"
apiVersion: v1
kind: Pod
metadata:
  name: hello-0
  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: hello, uid: $uid, controller: true, blockOwnerDeletion: true}]
spec: {containers: [{name: c, image: busybox}]}
Y
else
	wait_for 15 kc get podgroup hello || fail "the Job's PodGroup"
	wait_for 15 kc get pod hello-1 || fail "the Job's pods"
fi
kc delete job hello --cascade=orphan > /dev/null || fail "delete --cascade=orphan"
kc get job hello > /dev/null 2>&1 && fail "the Job stays"
kc get pod hello-0 > /dev/null || fail "--cascade=orphan deleted the pod"
[ -z "$(kc get pod hello-0 -o jsonpath='{.metadata.ownerReferences}')" ] || fail "ownerReferences kept"
if [ "$MODE" = standalone ]; then
	sleep 1
	for o in pod/hello-1 podgroup/hello workload/hello; do
		kc get "$o" > /dev/null || fail "--cascade=orphan deleted $o"
		[ -z "$(kc get "$o" -o jsonpath='{.metadata.ownerReferences}')" ] || fail "$o keeps its owner"
	done
fi
echo "ok: --cascade=orphan"

# --- foreground and background: the collector deletes the dependents -----------
if [ "$MODE" = standalone ]; then
	for cascade in foreground background; do
		sed "s/name: hello}/name: $cascade}/" > "$WORK/job.yaml" <<'Y'
apiVersion: batch/v1
kind: Job
metadata: {name: hello}
spec:
  parallelism: 2
  completions: 2
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
Y
		kc apply -f "$WORK/job.yaml" > /dev/null || fail "job $cascade"
		wait_for 15 kc get pod "$cascade-1" || fail "the $cascade Job's pods"
		# foreground: kubectl waits until the Job itself is gone, so its pods went first
		kc delete job "$cascade" --cascade="$cascade" --wait=true --timeout=20s > /dev/null ||
			fail "delete --cascade=$cascade"
		for o in "pod/$cascade-0" "pod/$cascade-1" "podgroup/$cascade"; do
			# foreground: gone already; background: the collector follows the owner
			[ "$cascade" = background ] &&
				kc wait --for=delete "$o" --timeout=15s > /dev/null 2>&1
			kc get "$o" > /dev/null 2>&1 && fail "--cascade=$cascade kept $o"
		done
	done
	echo "ok: --cascade=foreground, --cascade=background"
fi

# --- access reviews -------------------------------------------------------------
[ "$(kc auth can-i create pods)" = yes ] || fail "admin can-i"
[ "$(kc auth can-i create pods --token=viewtok)" = no ] || fail "viewer may create"
[ "$(kc auth can-i list pods --token=viewtok)" = yes ] || fail "viewer may not list"
kc auth can-i --list --token=viewtok > "$WORK/list" || fail "can-i --list"
grep -q '^\*\.\* .*\[get list watch\]' "$WORK/list" || fail "can-i --list: $(cat "$WORK/list")"
kc auth whoami --token=viewtok -o jsonpath='{.status.userInfo.username} {.status.userInfo.groups}' \
	> "$WORK/who" || fail "auth whoami"
grep -q '^viewer .*team-a.*system:authenticated' "$WORK/who" || fail "whoami: $(cat "$WORK/who")"
echo "ok: auth can-i, can-i --list, whoami"

# --- discovery, logs, version ------------------------------------------------------
kc get all -A > "$WORK/all" 2>&1 || fail "get all -A"
grep -q 'node/' "$WORK/all" && fail "get all -A lists nodes"
grep -q 'pod/m0' "$WORK/all" || fail "get all -A misses pods"
kc logs m0 2> "$WORK/err" && fail "logs answered"
grep -q 'no kubelet serves this node' "$WORK/err" || fail "logs: $(cat "$WORK/err")"
api "$PODKERNEL_SERVER/version" | grep -q '"gitCommit":"[0-9a-z]' || fail "/version gitCommit"
kc cluster-info > "$WORK/ci" 2>&1 || fail "cluster-info: $(cat "$WORK/ci")"
grep -q 'Kubernetes control plane is running at https://127.0.0.1' "$WORK/ci" ||
	fail "cluster-info: $(cat "$WORK/ci")"
[ -z "$(kc get services -A -o name 2>&1)" ] || fail "services listed"
printf 'apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [{port: 80}]}\n' |
	kc create -f - 2> "$WORK/err" && fail "a Service was created"
grep -q 'runs no service proxy' "$WORK/err" || fail "service create: $(cat "$WORK/err")"
echo "ok: get all -A, logs, /version, cluster-info"

# --- namespaces ------------------------------------------------------------------
for ns in default kube-system kube-public kube-node-lease; do
	kc get ns "$ns" > /dev/null || fail "namespace $ns missing"
done
kc run x -n nosuch --image=busybox 2> "$WORK/err" && fail "created in a missing namespace"
grep -q 'namespaces "nosuch" not found' "$WORK/err" || fail "NamespaceLifecycle: $(cat "$WORK/err")"
kc create ns gone > /dev/null && kc run y -n gone --image=busybox > /dev/null || fail "ns content"
kc get pod -n gone nosuch 2> "$WORK/err"
grep -q 'pods "nosuch" not found' "$WORK/err" || fail "get in a namespace: $(cat "$WORK/err")"
kc delete ns gone --timeout=15s > /dev/null || fail "delete ns"
kc get ns gone > /dev/null 2>&1 && fail "namespace stays"
echo "ok: namespaces"

# --- a typed client's read-modify-replace keeps the pod in its gang ----------------
timeout 60 /usr/bin/python3 "$PODKERNEL_SRC/tests/clients/python/replace_grouped.py" \
	"$PODKERNEL_SERVER" "$ADMIN_TOKEN" "$WORK/cert.pem" || fail "python read-modify-replace"
echo "ok: python replace keeps the group"
