#!/bin/sh
# Gang-aware disruption with the real `kubectl drain`, against the standalone
# appliance and the `--no-scheduling` stand-in: a 3-level gang (disruptionMode
# all at every level) with members on two nodes and a PodDisruptionBudget.
# While the budget forbids it, the drain of one node waits (429, the reason
# naming the unit and the budget, in the answer and in an Event) and no member
# goes; once the budget allows the unit, the drain evicts it whole, members on
# the other node included, never half.  A budget with both minAvailable and
# maxUnavailable is refused by field path; `kubectl get pdb` shows its columns and
# `kubectl create pdb` (protobuf) works.
. "$PODKERNEL_SRC/tests/kernel/server/lib.sh"
need kubectl
need curl

k() { timeout 60 kubectl --request-timeout=20s "$@"; }

pods_left() { k get pods -o name 2>/dev/null | sort | tr '\n' ' '; }

objects() {
	cat <<'Y'
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {cpu: "8", memory: 8Gi, pods: "110"}
  conditions: [{type: Ready, status: "True"}]
---
apiVersion: v1
kind: Node
metadata: {name: n2}
status:
  allocatable: {cpu: "8", memory: 8Gi, pods: "110"}
  conditions: [{type: Ready, status: "True"}]
---
apiVersion: scheduling.k8s.io/v1alpha3
kind: Workload
metadata: {name: svc}
spec:
  compositePodGroupTemplates:
  - name: svc
    schedulingPolicy: {basic: {}}
    disruptionMode: {all: {}}
    compositePodGroupTemplates:
    - name: engine
      schedulingPolicy: {gang: {minGroupCount: 2}}
      disruptionMode: {all: {}}
      podGroupTemplates:
      - name: gang
        schedulingPolicy: {gang: {minCount: 2}}
        disruptionMode: {all: {}}
---
apiVersion: scheduling.k8s.io/v1alpha3
kind: CompositePodGroup
metadata: {name: svc}
spec:
  workloadRef: {workloadName: svc, templateName: svc}
  schedulingPolicy: {basic: {}}
  disruptionMode: {all: {}}
---
apiVersion: scheduling.k8s.io/v1alpha3
kind: CompositePodGroup
metadata: {name: svc-engine}
spec:
  workloadRef: {workloadName: svc, templateName: engine}
  parentCompositePodGroupName: svc
  schedulingPolicy: {gang: {minGroupCount: 2}}
  disruptionMode: {all: {}}
Y
	for g in a b; do
		cat <<Y
---
apiVersion: scheduling.k8s.io/v1alpha3
kind: PodGroup
metadata: {name: svc-$g}
spec:
  workloadRef: {workloadName: svc, templateName: gang}
  parentCompositePodGroupName: svc-engine
  schedulingPolicy: {gang: {minCount: 2}}
  disruptionMode: {all: {}}
Y
		for i in 1 2; do
			cat <<Y
---
apiVersion: v1
kind: Pod
metadata: {name: $g$i, labels: {app: svc}}
spec:
  nodeName: n$i
  schedulingGroup: {podGroupName: svc-$g}
  containers: [{name: c, image: busybox}]
Y
		done
	done
	cat <<'Y'
---
apiVersion: v1
kind: Pod
metadata: {name: solo, labels: {app: other}}
spec:
  nodeName: n1
  containers: [{name: c, image: busybox}]
Y
}

run_mode() {
	mode=$1; shift
	pk_start "$WORK/data-$mode" "$@"
	PK_URL="http://127.0.0.1:$PK_PORT"
	cat >"$WORK/kubeconfig" <<K
apiVersion: v1
kind: Config
clusters: [{name: pk, cluster: {server: "$PK_URL"}}]
users: [{name: u, user: {}}]
contexts: [{name: pk, context: {cluster: pk, user: u, namespace: default}}]
current-context: pk
K
	export KUBECONFIG="$WORK/kubeconfig"
	objects >"$WORK/gang.yaml"
	k create -f "$WORK/gang.yaml" >"$WORK/out" 2>&1 || fail "$mode: create: $(cat "$WORK/out")"
	for p in a1 a2 b1 b2 solo; do
		k patch pod $p --subresource=status --type=merge -p \
			'{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}' \
			>"$WORK/out" 2>&1 || fail "$mode: status of $p: $(cat "$WORK/out")"
	done

	# both bounds: refused by field path, nothing stored
	cat >"$WORK/bad.yaml" <<'Y'
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: bad}
spec: {minAvailable: 1, maxUnavailable: "50%", selector: {matchLabels: {app: svc}}}
Y
	k create -f "$WORK/bad.yaml" >"$WORK/out" 2>&1 && fail "$mode: both bounds accepted"
	grep -q 'spec: Invalid value: minAvailable and maxUnavailable cannot be both set' "$WORK/out" ||
		fail "$mode: bad budget: $(cat "$WORK/out")"
	cat >"$WORK/pdb.yaml" <<'Y'
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: svc}
spec: {minAvailable: 1, selector: {matchLabels: {app: svc}}}
Y
	k create -f "$WORK/pdb.yaml" >"$WORK/out" 2>&1 || fail "$mode: pdb: $(cat "$WORK/out")"
	# standalone's budget controller counts it: 5 pods, 4 selected and healthy
	if [ "$mode" = standalone ]; then
		i=0
		while [ $i -lt 50 ]; do
			got=$(k get pdb svc -o jsonpath='{.status.expectedPods}/{.status.currentHealthy}/{.status.desiredHealthy}/{.status.disruptionsAllowed}')
			[ "$got" = 4/4/1/3 ] && break
			sleep 0.1
			i=$((i + 1))
		done
		[ "$got" = 4/4/1/3 ] || fail "$mode: pdb status: $got"
		k get pdb svc >"$WORK/out" 2>&1
		grep -q '^svc  *1  *N/A  *3 ' "$WORK/out" || fail "$mode: get pdb: $(cat "$WORK/out")"
	fi
	# kubectl create pdb sends protobuf
	k create pdb other --selector=app=other --max-unavailable=50% >"$WORK/out" 2>&1 ||
		fail "$mode: create pdb: $(cat "$WORK/out")"
	[ "$(k get pdb other -o jsonpath='{.spec.maxUnavailable}')" = 50% ] ||
		fail "$mode: protobuf pdb: $(k get pdb other -o yaml)"
	k delete pdb other >/dev/null 2>&1 || fail "$mode: delete pdb"

	# the unit is 4 healthy pods and the budget keeps 1: evicting one member
	# would take all 4, so the eviction is 429 with the unit and budget named
	got=$(code POST /api/v1/namespaces/default/pods/a1/eviction -H 'Content-Type: application/json' \
		-d '{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"a1"}}')
	[ "$got" = 429 ] || fail "$mode: eviction of a1: $got $(cat "$WORK/body")"
	grep -q '"reason": *"TooManyRequests"' "$WORK/body" &&
		grep -q 'disruption budget svc needs 1 healthy pods and has 4 currently' "$WORK/body" &&
		grep -q 'CompositePodGroup default/svc (disruptionMode all, 4 pods)' "$WORK/body" ||
		fail "$mode: 429 body: $(cat "$WORK/body")"

	# a pod two budgets select: 500, as upstream, nothing evicted
	sed 's/name: svc}/name: svc2}/' "$WORK/pdb.yaml" | k create -f - >/dev/null 2>&1 ||
		fail "$mode: second pdb"
	got=$(code POST /api/v1/namespaces/default/pods/b2/eviction -H 'Content-Type: application/json' \
		-d '{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"b2"}}')
	[ "$got" = 500 ] && grep -q 'more than one PodDisruptionBudget' "$WORK/body" ||
		fail "$mode: two budgets: $got $(cat "$WORK/body")"
	k delete pdb svc2 >/dev/null 2>&1 || fail "$mode: delete svc2"

	# kubectl drain waits (Blocked), retrying every 5 s: stopped after 3 s, no
	# member is gone
	timeout 3 kubectl --request-timeout=20s drain n1 --force --ignore-daemonsets \
		>"$WORK/out" 2>&1 && fail "$mode: drain went through the budget: $(cat "$WORK/out")"
	grep -q "Cannot evict pod as it would violate the pod's disruption budget" "$WORK/out" ||
		fail "$mode: drain output: $(cat "$WORK/out")"
	[ "$(pods_left)" = "pod/a1 pod/a2 pod/b1 pod/b2 " ] ||
		fail "$mode: a partial unit after a refused drain: $(pods_left)"
	k get events --field-selector reason=EvictionBlocked -o jsonpath='{.items[*].message}' \
		>"$WORK/out" 2>&1
	grep -q 'evicts its disruption unit, CompositePodGroup default/svc' "$WORK/out" ||
		fail "$mode: no EvictionBlocked Event: $(cat "$WORK/out")"

	# a budget that lets the unit go: the drain evicts it whole, n2's members too
	k patch pdb svc --type=merge -p '{"spec":{"minAvailable":0}}' >/dev/null 2>&1 ||
		fail "$mode: patch pdb"
	# a dry run answers as the eviction would and evicts nothing
	got=$(code POST '/api/v1/namespaces/default/pods/a1/eviction?dryRun=All' \
		-H 'Content-Type: application/json' \
		-d '{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"a1"}}')
	[ "$got" = 201 ] || fail "$mode: dry-run eviction: $got $(cat "$WORK/body")"
	[ "$(pods_left)" = "pod/a1 pod/a2 pod/b1 pod/b2 " ] ||
		fail "$mode: a dry run evicted: $(pods_left)"
	k drain n1 --force --ignore-daemonsets --timeout=30s >"$WORK/out" 2>&1 ||
		fail "$mode: drain: $(cat "$WORK/out")"
	grep -q 'node/n1 drained' "$WORK/out" || fail "$mode: drain output: $(cat "$WORK/out")"
	[ -z "$(pods_left)" ] || fail "$mode: left after the drain: $(pods_left)"
	k get events --field-selector reason=EvictedWithUnit -o jsonpath='{.items[*].message}' \
		>"$WORK/out" 2>&1
	grep -q 'with its disruption unit, CompositePodGroup default/svc (disruptionMode all, 4 pods)' \
		"$WORK/out" || fail "$mode: no EvictedWithUnit Event: $(cat "$WORK/out")"
	# the granted eviction wrote the budget's status, the unit in disruptedPods
	# (standalone's controller then forgets the pods gone: 0 expected)
	want=4/0
	[ "$mode" = standalone ] && want=0/0
	i=0
	while [ $i -lt 50 ]; do
		got=$(k get pdb svc -o jsonpath='{.status.expectedPods}/{.status.desiredHealthy}')
		[ "$got" = "$want" ] && break
		sleep 0.1
		i=$((i + 1))
	done
	case "$mode/$got" in
	standalone/0/0 | stand-in/4/0) ;;
	*) fail "$mode: pdb status after the drain: $got" ;;
	esac
	pk_stop
}

run_mode standalone
run_mode stand-in --no-scheduling
echo "test_server_drain: ok"
