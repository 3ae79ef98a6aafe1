#!/bin/sh
# Run every libFuzzer target for SECONDS seconds on its seed corpus
# (tests/fuzz/corpus/<target>/); new inputs go to a scratch folder.
# JOBS targets run at once (default: the number of CPUs), so the smoke run
# of make check costs SECONDS per JOBS targets; each keeps its whole time.
set -u
BUILD=${1:-build/fuzz}
SECONDS_EACH=${2:-60}
JOBS=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
out=$(mktemp -d) || exit 1
trap 'rm -rf "$out"' EXIT

# One target: its report in $out/<name>.txt, its verdict in $out/<name>.rc.
fuzz_one() {
	f=$1 name=$(basename "$1")
	seeds="tests/fuzz/corpus/$name"
	work=$(mktemp -d)
	[ -d "$seeds" ] && cp -r "$seeds"/. "$work"/ 2>/dev/null
	if ! "$f" -max_total_time="$SECONDS_EACH" -max_len=65536 -rss_limit_mb=2048 \
		-print_final_stats=0 "$work" >"$work.log" 2>&1; then
		{ tail -40 "$work.log"; echo "fuzz $name: FAILED"; } >"$out/$name.txt"
		echo 1 >"$out/$name.rc"
	else
		echo "fuzz $name: $(ls "$work" | wc -l) inputs, no crash" >"$out/$name.txt"
		echo 0 >"$out/$name.rc"
	fi
	rm -rf "$work" "$work.log"
}

n=0
running=0
for f in "$BUILD"/tests/fuzz/fuzz_*; do
	[ -x "$f" ] || continue
	n=$((n + 1))
	fuzz_one "$f" &
	running=$((running + 1))
	if [ "$running" -ge "$JOBS" ]; then
		wait
		running=0
	fi
done
wait
rc=0
for f in "$BUILD"/tests/fuzz/fuzz_*; do
	[ -x "$f" ] || continue
	name=$(basename "$f")
	echo "== fuzz $name (${SECONDS_EACH}s)"
	cat "$out/$name.txt" 2>/dev/null || echo "fuzz $name: no result"
	[ "$(cat "$out/$name.rc" 2>/dev/null)" = 0 ] || rc=1
done
if [ "$n" = 0 ]; then
	echo "fuzz: no targets under $BUILD/tests/fuzz (make fuzz-build)"
	rc=1
fi
exit $rc
