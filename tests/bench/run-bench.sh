#!/bin/sh
# Run every benchmark program and script (tests/bench/bench_*.sh, given BUILD);
# each prints its own table.
BUILD=${1:-build/bench}
rc=0
for b in "$BUILD"/tests/bench/bench_*; do
	[ -x "$b" ] || continue
	echo "== $(basename "$b")"
	"$b" || rc=1
done
for s in tests/bench/bench_*.sh; do
	[ -f "$s" ] || continue
	echo "== $(basename "$s" .sh)"
	sh "$s" "$BUILD" || rc=1
done
exit $rc
