#!/bin/sh
# Run every benchmark program; each prints its own table.
BUILD=${1:-build/bench}
rc=0
for b in "$BUILD"/tests/bench/bench_*; do
	[ -x "$b" ] || continue
	echo "== $(basename "$b")"
	"$b" || rc=1
done
exit $rc
