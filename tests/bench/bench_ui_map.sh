#!/bin/sh
# bench_ui_map.sh BUILD — how fast the placement map page renders in headless
# Chromium, in real time (tests/bench/ui_render.py drives it over the DevTools
# protocol).  Floor: the page of a 16-host cluster (boards/tpu-cube.yaml);
# measured: 16,384 hosts (boards/tpu-pod-16k.yaml: 64 superslices, eight
# cube gangs bound).  Medians of RUNS (default 7) page loads in one browser,
# each in a fresh tab; render = navigation start to every canvas drawn, draw =
# answer arrived to every canvas drawn, longest task = the longest the page
# was blocked (long-task entries, 0 when none reached 50 ms).
set -eu
BUILD=${1:-build/bench}
BIN=$(cd "$BUILD/bin" && pwd)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
RUNS=${RUNS:-7}
for t in chromium python3 curl; do
	command -v "$t" > /dev/null 2>&1 || { echo "bench_ui_map: $t is not installed (make deps)" >&2; exit 1; }
done
WORK=$(mktemp -d "${TMPDIR:-/tmp}/podkernel-bench-ui.XXXXXX")
PIDS=""
cleanup() {
	for p in $PIDS; do kill "$p" 2> /dev/null || true; done
	for p in $PIDS; do wait "$p" 2> /dev/null || true; done
	rm -rf "$WORK"
}
trap cleanup EXIT INT TERM
TOKEN=bench-ui-token
echo "$TOKEN,admin,1,\"system:masters\"" > "$WORK/tokens.csv"

# start NAME BOARD: podkerneld on a free port; sets PORT
start() {
	"$BIN/podkerneld" --listen 127.0.0.1:0 --data-dir "$WORK/$1" --token-auth-file "$WORK/tokens.csv" \
		--simulate-board "$2" > "$WORK/$1.log" 2>&1 &
	PIDS="$PIDS $!"
	PORT=""
	for _ in $(seq 1 3000); do
		grep -q "scheduling loop running" "$WORK/$1.log" && break
		sleep 0.1
	done
	PORT=$(sed -n 's/.*serving on .*(port \([0-9]*\)).*/\1/p' "$WORK/$1.log" | tail -n 1)
	grep -q "scheduling loop running" "$WORK/$1.log" || { cat "$WORK/$1.log" >&2; exit 1; }
}

# median of column COL of FILE
median() { sort -n -k "$2,$2" "$1" | awk -v c="$2" '{v[NR]=$c} END {print v[int((NR+1)/2)]}'; }

start floor "$SRC/boards/tpu-cube.yaml"
FLOOR_PORT=$PORT
start big "$SRC/boards/tpu-pod-16k.yaml"
BIG_PORT=$PORT
for g in 0 1 2 3 4 5 6 7; do
	printf 'apiVersion: scheduling.k8s.io/v1alpha3\nkind: PodGroup\nmetadata: {name: cube-%s}\nspec:\n  schedulingPolicy: {gang: {minCount: 16}}\n  schedulingConstraints: {topology: [{key: topology.podkernel.dev/cube}]}\n---\n' "$g"
	for i in $(seq 0 15); do
		printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: cube-%s-%s}\nspec:\n  schedulingGroup: {podGroupName: cube-%s}\n  containers: [{name: c, image: x, resources: {requests: {google.com/tpu: "4"}}}]\n---\n' "$g" "$i" "$g"
	done
done > "$WORK/gangs.yaml"
PODKERNEL_SERVER="http://127.0.0.1:$BIG_PORT" PODKERNEL_TOKEN=$TOKEN "$BIN/podctl" apply -f "$WORK/gangs.yaml" > /dev/null
sleep 2

python3 "$SRC/tests/bench/ui_render.py" "http://127.0.0.1:$FLOOR_PORT/ui/#token=$TOKEN" "$RUNS" > "$WORK/floor.txt"
python3 "$SRC/tests/bench/ui_render.py" "http://127.0.0.1:$BIG_PORT/ui/#token=$TOKEN" "$RUNS" > "$WORK/big.txt"
awk '$3 != 16384 { exit 1 }' "$WORK/big.txt" || { echo "bench_ui_map: not every host was drawn" >&2; exit 1; }
bytes=$(curl -s -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$BIG_PORT/ui/api/placement" | wc -c)

f=$(median "$WORK/floor.txt" 1)
r=$(median "$WORK/big.txt" 1)
d=$(median "$WORK/big.txt" 2)
l=$(median "$WORK/big.txt" 4)
printf '%-52s %10s %10s\n' "placement map page, headless Chromium ($RUNS runs)" "median" "ratio"
printf '%-52s %8s ms %10s\n' "floor: 16 hosts, navigation to all drawn" "$f" "1.00"
printf '%-52s %8s ms %9.2fx\n' "16,384 hosts, navigation to all drawn" "$r" "$(echo "$r $f" | awk '{print $1 / $2}')"
printf '%-52s %8s ms\n' "16,384 hosts, answer arrived to all drawn" "$d"
printf '%-52s %8s ms\n' "16,384 hosts, longest blocking task" "$l"
printf '%-52s %8s KiB\n' "16,384 hosts, /ui/api/placement document" "$((bytes / 1024))"
