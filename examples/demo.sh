#!/bin/sh
# make demo: the podkernel appliance on a simulated TPU cluster.
#
# Starts podkerneld on a free loopback port with a throw-away data directory
# and the 512 simulated hosts of boards/tpu-superslice.yaml (2 superslices of
# 16 cubes), runs the real podagent of this machine publishing its own Node
# (with its own node token), submits the three KEP-6012 user stories with
# podctl (disaggregated serving as two LeaderWorkerSets under one parent,
# examples/stories/serving-lws.yaml), waits until they are scheduled and
# shows where everything landed.  A Kueue ClusterQueue of 64 TPUs
# (examples/queues/) then holds a second queued JobSet back on quota until
# the first is deleted, and admits it.
# Then a second podkerneld on the simulated GB200 NVL72 racks
# (boards/gb200-nvl72.yaml, with the ResourceSlices of its DRA drivers)
# places examples/dra/jobset-imex.yaml: a JobSet whose workers each claim a
# GPU and whose worker replicas each share one IMEX channel claim (their
# PodGroup's), so each replica lands in one NVL72 domain; podctl describe
# shows a pod's claims (its own and its PodGroup's) and devices.
# It ends with a simulated week of the same kinds of workloads on the same
# board (podctl simulate, examples/sim/week.csv), the fit and kep strategies
# side by side, and says where the HTML report lies.
# It ends by printing the placement map's URL (the first podkerneld, with the
# stories' gangs) and keeps serving until Ctrl-C; with PODKERNEL_DEMO_KEEP=0
# (make demo DEMO_KEEP=0) it stops there instead, for scripts.
# Everything started here is stopped on exit.
set -eu
BIN=${1:-build/bin}
KEEP=${PODKERNEL_DEMO_KEEP:-0}
BIN=$(cd "$BIN" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)
BOARD="$SRC/boards/tpu-superslice.yaml"
STORIES="$SRC/examples/stories"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/podkernel-demo.XXXXXX")
PIDS=""

cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null || true; done
	for p in $PIDS; do wait "$p" 2>/dev/null || true; done
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

NODE=$(hostname | tr 'A-Z' 'a-z')
ADMIN_TOKEN=demo-admin-$$
NODE_TOKEN=demo-node-$$
cat > "$WORK/tokens.csv" <<EOF
$ADMIN_TOKEN,admin,1,"system:masters"
$NODE_TOKEN,system:node:$NODE,2,"system:nodes"
EOF

step "podkerneld: API server, durable store, scheduling loop; simulated board $(basename "$BOARD")"
"$BIN/podkerneld" --listen 127.0.0.1:0 --data-dir "$WORK/data" \
	--token-auth-file "$WORK/tokens.csv" --simulate-board "$BOARD" -v 1 \
	2> "$WORK/podkerneld.log" &
MAIN_PID=$!
PIDS="$PIDS $!"
PORT=""
for _ in $(seq 1 100); do
	PORT=$(sed -n 's/.*serving on .*(port \([0-9]*\)).*/\1/p' "$WORK/podkerneld.log" | head -n 1)
	[ -n "$PORT" ] && grep -q "scheduling loop running" "$WORK/podkerneld.log" && break
	sleep 0.2
done
if [ -z "$PORT" ]; then
	echo "demo: podkerneld did not start:" >&2
	cat "$WORK/podkerneld.log" >&2
	exit 1
fi
export PODKERNEL_SERVER="http://127.0.0.1:$PORT" PODKERNEL_TOKEN="$ADMIN_TOKEN"
MAIN_SERVER=$PODKERNEL_SERVER
sed 's/^/  /' "$WORK/podkerneld.log"

step "podagent on this machine publishes node $NODE (node token, every 5 s)"
"$BIN/podagent" --publish "$PODKERNEL_SERVER" --register-node --token "$NODE_TOKEN" --node-name "$NODE" \
	--interval 5 --no-udev --no-netlink 2> "$WORK/podagent.log" &
PIDS="$PIDS $!"
for _ in $(seq 1 50); do
	"$BIN/podctl" get node "$NODE" > /dev/null 2>&1 && break
	sleep 0.2
done
"$BIN/podctl" get nodes -o wide | sed -n "1p;/^$NODE /p"
echo "  ... and $("$BIN/podctl" get nodes | grep -c simulated) simulated TPU hosts"

step "submit the three KEP-6012 user stories"
for story in training serving-lws pipeline; do
	echo "# $story: $(sed -n 's/^# KEP-6012 user story "\([^"]*\)".*/\1/p' "$STORIES/$story.yaml")"
	"$BIN/podctl" apply -f "$STORIES/$story.yaml" | tail -n 2
done

step "wait until every pod is bound"
want=53 # 32 training + 11 serving + 10 pipeline pods
for _ in $(seq 1 150); do
	bound=$("$BIN/podctl" get pods -A 2>/dev/null | grep -c ' Bound ' || true)
	[ "$bound" -ge "$want" ] && break
	sleep 0.2
done
echo "  $bound of $want pods bound"

step "Kueue queues: a second JobSet waits on quota until the first is deleted"
QUEUES="$SRC/examples/queues"
"$BIN/podctl" apply -f "$QUEUES/research-queue.yaml" | tail -n 3
"$BIN/podctl" apply -f "$QUEUES/jobset-pretrain.yaml"
sed 's/pretrain-a/pretrain-b/' "$QUEUES/jobset-pretrain.yaml" | "$BIN/podctl" apply -f -
reason() { "$BIN/podctl" get jobset "$1" -n research -o jsonpath='{.metadata.annotations.queue\.podkernel\.dev/pending-reason}' 2>/dev/null; }
for _ in $(seq 1 150); do
	[ -n "$(reason pretrain-b)" ] && break
	sleep 0.2
done
"$BIN/podctl" queue
echo "  pretrain-b waits: $(reason pretrain-b)"
"$BIN/podctl" delete jobset pretrain-a -n research
for _ in $(seq 1 150); do
	[ "$("$BIN/podctl" get jobset pretrain-b -n research -o jsonpath='{.spec.suspend}')" = false ] && break
	sleep 0.2
done
for _ in $(seq 1 150); do
	queued=$("$BIN/podctl" get pods -n research 2>/dev/null | grep -c '^pretrain-b.* Bound ' || true)
	[ "$queued" -ge 16 ] && break
	sleep 0.2
done
echo "  pretrain-b admitted by $("$BIN/podctl" get jobset pretrain-b -n research -o jsonpath='{.metadata.annotations.queue\.podkernel\.dev/admission}'): $queued of 16 pods bound"
"$BIN/podctl" queue

step "where the training shards landed (superslice/cube/host)"
"$BIN/podctl" get pods -n training -o wide | awk 'NR == 1 || $1 ~ /-[0-3]-[07]$/'
step "the group hierarchy of every story"
"$BIN/podctl" get compositepodgroups -A
"$BIN/podctl" get podgroups -A
step "podctl describe cpg llm-train -n training"
"$BIN/podctl" describe cpg llm-train -n training | grep -v '^  host '
step "podctl describe cpg llm-serve -n serving-lws (the LeaderWorkerSets under it)"
"$BIN/podctl" describe cpg llm-serve -n serving-lws | grep -v '^  host '
"$BIN/podctl" get leaderworkersets -n serving-lws
step "podctl top (allocated/allocatable per topology domain)"
"$BIN/podctl" top | grep -v '^host '

GB="$SRC/boards/gb200-nvl72.yaml"
step "dynamic resource allocation: a JobSet sharing an IMEX channel on $(basename "$GB")"
"$BIN/podkerneld" --listen 127.0.0.1:0 --data-dir "$WORK/gb200" \
	--token-auth-file "$WORK/tokens.csv" --simulate-board "$GB" -v 1 2> "$WORK/gb200.log" &
GB_PID=$!
PIDS="$PIDS $!"
PORT=""
for _ in $(seq 1 100); do
	PORT=$(sed -n 's/.*serving on .*(port \([0-9]*\)).*/\1/p' "$WORK/gb200.log" | head -n 1)
	[ -n "$PORT" ] && grep -q "scheduling loop running" "$WORK/gb200.log" && break
	sleep 0.2
done
[ -n "$PORT" ] || { cat "$WORK/gb200.log" >&2; exit 1; }
export PODKERNEL_SERVER="http://127.0.0.1:$PORT"
echo "  $("$BIN/podctl" get resourceslices | grep -c compute-domain) IMEX channel slices, $("$BIN/podctl" get resourceslices | grep -c gpu.example.com) GPU slices"
"$BIN/podctl" apply -f "$SRC/examples/dra/deviceclasses.yaml" | tail -n 1
"$BIN/podctl" apply -f "$SRC/examples/dra/jobset-imex.yaml" | tail -n 3
for _ in $(seq 1 150); do
	bound=$("$BIN/podctl" get pods 2>/dev/null | grep -c '^nvl-train.* Bound ' || true)
	[ "$bound" -ge 8 ] && break
	sleep 0.2
done
echo "  $bound of 8 nvl-train pods bound"
"$BIN/podctl" get pods -o wide
step "podctl describe pod nvl-train-worker-1-3"
"$BIN/podctl" describe pod nvl-train-worker-1-3
kill "$GB_PID" 2>/dev/null || true
wait "$GB_PID" 2>/dev/null || true
export PODKERNEL_SERVER="$MAIN_SERVER"
step "a simulated week of these workloads on $(basename "$BOARD") (podctl simulate, fit vs kep)"
REPORT="${PODKERNEL_DEMO_REPORT:-$SRC/build/demo-week-report.html}"
mkdir -p "$(dirname "$REPORT")"
"$BIN/podctl" simulate --board "$BOARD" --trace "$SRC/examples/sim/week.csv" \
	--strategy fit,kep --seed 1 -o "$REPORT"

step "the placement map of $(basename "$BOARD")"
# The page itself is public; #token= hands it the admin token (kept in the
# tab's sessionStorage only).
MAP_URL="$MAIN_SERVER/ui/#token=$ADMIN_TOKEN"
echo "  $("$BIN/podctl" get pods -A | grep -c ' Bound ') pods bound; the same in a terminal:"
echo "  PODKERNEL_SERVER=$MAIN_SERVER PODKERNEL_TOKEN=$ADMIN_TOKEN $BIN/podctl map"
echo "map: $MAP_URL"
[ "$KEEP" = 0 ] && exit 0
echo "podkerneld keeps serving the map (data directory $WORK); Ctrl-C stops it and cleans up."
wait "$MAIN_PID"
