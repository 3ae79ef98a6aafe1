#!/bin/sh
# `make demo` keeps working: examples/demo.sh against the programs under test
# schedules all 53 pods of the three KEP-6012 user stories on the simulated
# TPU superslice board and shows them, then replays a simulated week of the
# same kinds of workloads with the fit and kep strategies and names the report;
# a queued JobSet waits on its ClusterQueue's quota until the first is deleted;
# on the GB200 NVL72 board the DRA JobSet's 8 pods are bound and describe
# shows a pod's IMEX channel, the claim of its worker replica's PodGroup.
# As `make demo` runs it (PODKERNEL_DEMO_KEEP=1), it ends by printing the
# placement map's URL and keeps serving it: the page and its data answer with
# the token of the URL, and SIGINT (Ctrl-C) stops the demo and everything it
# started.
set -eu
. "$PODKERNEL_SRC/tests/e2e/lib.sh"
e2e_setup
need_tool curl python3
# In its own session as a terminal's foreground job would be, with SIGINT not
# ignored (a background job of this non-interactive shell would ignore it).
PODKERNEL_DEMO_KEEP=1 PODKERNEL_DEMO_REPORT="$WORK/week.html" setsid python3 -c '
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp("sh", ["sh"] + sys.argv[1:])' "$PODKERNEL_SRC/examples/demo.sh" "$PODKERNEL_BIN" \
	> "$WORK/demo.out" 2>&1 &
DEMO=$!
E2E_PIDS="$E2E_PIDS $DEMO"
url=""
for _ in $(seq 1 600); do
	url=$(sed -n 's/^map: //p' "$WORK/demo.out")
	[ -n "$url" ] && break
	kill -0 "$DEMO" 2>/dev/null || { cat "$WORK/demo.out"; fail "demo.sh exited before the map"; }
	sleep 0.1
done
[ -n "$url" ] || { cat "$WORK/demo.out"; fail "demo.sh printed no map URL"; }
case $url in
http://127.0.0.1:*/ui/\#token=*) ;;
*) fail "the map URL is $url" ;;
esac
sleep 0.5
kill -0 "$DEMO" 2>/dev/null || { cat "$WORK/demo.out"; fail "demo.sh does not keep serving"; }
base=${url%%#*}
curl -fsS "$base" | grep -q '<html' || fail "$base does not answer the map page"
curl -fsS -H "Authorization: Bearer ${url#*#token=}" "${base}api/placement" > "$WORK/placement.json" ||
	fail "the map's data does not answer to the URL's token"
grep -q '"superslice"\|"domains"' "$WORK/placement.json" || fail "the map's data names no domain"
# Ctrl-C: the terminal signals the whole process group
python3 -c 'import os, signal, sys; os.killpg(int(sys.argv[1]), signal.SIGINT)' "$DEMO"
rc=0
wait "$DEMO" || rc=$?
[ "$rc" = 130 ] || { cat "$WORK/demo.out"; fail "demo.sh exited $rc on SIGINT"; }
port=$(echo "$base" | sed 's#http://127.0.0.1:\([0-9]*\)/.*#\1#')
curl -fsS -o /dev/null "http://127.0.0.1:$port/healthz" 2>/dev/null && fail "podkerneld still serves after Ctrl-C"
grep -q '53 of 53 pods bound' "$WORK/demo.out" || { cat "$WORK/demo.out"; fail "not every pod bound"; }
grep -q 'CompositePodGroupInitiallyScheduled    True' "$WORK/demo.out" ||
	fail "no scheduled CompositePodGroup in describe"
grep -q '^cube ' "$WORK/demo.out" || fail "podctl top shows no cube level"
grep -q 'pretrain-b waits: insufficient unused quota for google.com/tpu in flavor tpu-v5p of ClusterQueue research, 64 more needed' \
	"$WORK/demo.out" || { cat "$WORK/demo.out"; fail "the second queued JobSet does not wait on quota"; }
grep -q 'pretrain-b admitted by research/tpu-v5p: 16 of 16 pods bound' "$WORK/demo.out" ||
	{ cat "$WORK/demo.out"; fail "the queued JobSet is not admitted once the first is deleted"; }
grep -q '8 of 8 nvl-train pods bound' "$WORK/demo.out" || { cat "$WORK/demo.out"; fail "the DRA JobSet"; }
grep -q 'channel  *compute-domain.nvidia.com/b0-nvl[0-9]/channel-0' "$WORK/demo.out" ||
	{ cat "$WORK/demo.out"; fail "describe shows no IMEX channel"; }
grep -q '^  shared-imex-channel (PodGroup) *nvl-train-worker-1-shared-imex-channel-' "$WORK/demo.out" ||
	{ cat "$WORK/demo.out"; fail "describe shows no PodGroup claim"; }
grep -q "^report: $WORK/week.html" "$WORK/demo.out" && [ -s "$WORK/week.html" ] ||
	fail "the simulated week wrote no report"
grep -q '^run 2: tpu-superslice, strategy kep' "$WORK/demo.out" || fail "no kep run in the summary"
grep -q 'jobs        1974:' "$WORK/demo.out" || fail "the week's 1974 jobs are not in the summary"
echo "ok"
