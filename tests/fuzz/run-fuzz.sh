#!/bin/sh
# Run every libFuzzer target for SECONDS seconds on its seed corpus
# (tests/fuzz/corpus/<target>/); new inputs go to a scratch folder.
set -u
BUILD=${1:-build/fuzz}
SECONDS_EACH=${2:-60}
rc=0
n=0
for f in "$BUILD"/tests/fuzz/fuzz_*; do
	[ -x "$f" ] || continue
	n=$((n + 1))
	name=$(basename "$f")
	seeds="tests/fuzz/corpus/$name"
	work=$(mktemp -d)
	[ -d "$seeds" ] && cp -r "$seeds"/. "$work"/ 2>/dev/null
	echo "== fuzz $name (${SECONDS_EACH}s)"
	if ! "$f" -max_total_time="$SECONDS_EACH" -max_len=65536 -rss_limit_mb=2048 \
		-print_final_stats=0 "$work" >"$work.log" 2>&1; then
		tail -40 "$work.log"; rc=1
		echo "fuzz $name: FAILED"
	else
		echo "fuzz $name: $(grep -c . "$work.log" >/dev/null; ls "$work" | wc -l) inputs, no crash"
	fi
	rm -rf "$work" "$work.log"
done
if [ "$n" = 0 ]; then
	echo "fuzz: no targets under $BUILD/tests/fuzz (make fuzz-build)"
	rc=1
fi
exit $rc
