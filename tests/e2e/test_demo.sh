#!/bin/sh
# `make demo` keeps working: examples/demo.sh against the programs under test
# schedules all 53 pods of the three KEP-6012 user stories on the simulated
# TPU superslice board and shows them.
set -eu
. "$PODKERNEL_SRC/tests/e2e/lib.sh"
e2e_setup
sh "$PODKERNEL_SRC/examples/demo.sh" "$PODKERNEL_BIN" > "$WORK/demo.out" 2>&1 ||
	{ cat "$WORK/demo.out"; fail "demo.sh failed"; }
grep -q '53 of 53 pods bound' "$WORK/demo.out" || { cat "$WORK/demo.out"; fail "not every pod bound"; }
grep -q 'CompositePodGroupInitiallyScheduled    True' "$WORK/demo.out" ||
	fail "no scheduled CompositePodGroup in describe"
grep -q '^cube ' "$WORK/demo.out" || fail "podctl top shows no cube level"
echo "ok"
