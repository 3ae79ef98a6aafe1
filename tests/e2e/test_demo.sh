#!/bin/sh
# `make demo` keeps working: examples/demo.sh against the programs under test
# schedules all 53 pods of the three KEP-6012 user stories on the simulated
# TPU superslice board and shows them, then replays a simulated week of the
# same kinds of workloads with the fit and kep strategies and names the report;
# on the GB200 NVL72 board the DRA JobSet's 8 pods are bound and describe
# shows a pod's IMEX channel, the claim of its worker replica's PodGroup.
set -eu
. "$PODKERNEL_SRC/tests/e2e/lib.sh"
e2e_setup
PODKERNEL_DEMO_REPORT="$WORK/week.html" sh "$PODKERNEL_SRC/examples/demo.sh" "$PODKERNEL_BIN" \
	> "$WORK/demo.out" 2>&1 ||
	{ cat "$WORK/demo.out"; fail "demo.sh failed"; }
grep -q '53 of 53 pods bound' "$WORK/demo.out" || { cat "$WORK/demo.out"; fail "not every pod bound"; }
grep -q 'CompositePodGroupInitiallyScheduled    True' "$WORK/demo.out" ||
	fail "no scheduled CompositePodGroup in describe"
grep -q '^cube ' "$WORK/demo.out" || fail "podctl top shows no cube level"
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
