#!/bin/sh
# `make demo` keeps working: examples/demo.sh against the programs under test
# schedules all 53 pods of the three KEP-6012 user stories on the simulated
# TPU superslice board and shows them, then replays a simulated week of the
# same kinds of workloads with the fit and kep strategies and names the report.
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
grep -q "^report: $WORK/week.html" "$WORK/demo.out" && [ -s "$WORK/week.html" ] ||
	fail "the simulated week wrote no report"
grep -q '^run 2: tpu-superslice, strategy kep' "$WORK/demo.out" || fail "no kep run in the summary"
grep -q 'jobs        1974:' "$WORK/demo.out" || fail "the week's 1974 jobs are not in the summary"
echo "ok"
