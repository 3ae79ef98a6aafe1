#!/bin/sh
# tests/run-tests.sh counts results by the skip rules of tests/need.sh: on a
# scratch tree with one Check suite and scripts that pass, fail, miss a tool,
# skip with a SKIP: reason and exit 77 without one, the closing line is
# "2 passed, 3 failed, 1 skipped", the silent 77 is named as failed and the
# skip reason is repeated.  A build without Check suites fails.
set -u
: "${PODKERNEL_SRC:?}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/podkernel-runtests.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
mkdir -p "$tmp/tree/tests" "$tmp/tree/build/tests" "$tmp/empty/tests" "$tmp/empty/build"
cp "$PODKERNEL_SRC/tests/need.sh" "$tmp/tree/tests/"
printf '#!/bin/sh\nexit 0\n' > "$tmp/tree/build/tests/test_suite"
chmod +x "$tmp/tree/build/tests/test_suite"
S=$tmp/tree/tests
printf 'exit 0\n' > "$S/test_ok.sh"
printf 'echo broken; exit 1\n' > "$S/test_broken.sh"
printf '. "$PODKERNEL_SRC/tests/need.sh"\nneed_tool podkernel-no-such-tool\nexit 0\n' > "$S/test_tool.sh"
printf '. "$PODKERNEL_SRC/tests/need.sh"\nskip "no frobnicator on this machine"\n' > "$S/test_skip.sh"
printf 'echo "frobnicator missing" >&2; exit 77\n' > "$S/test_silent.sh"

(cd "$tmp/tree" && sh "$PODKERNEL_SRC/tests/run-tests.sh" build) > "$tmp/out" 2>&1
rc=$?
[ $rc != 0 ] || { echo "FAIL: run-tests.sh exited 0 with failing scripts"; fail=1; }
tail -1 "$tmp/out" | grep -qx '2 passed, 3 failed, 1 skipped' ||
	{ echo "FAIL: closing line: $(tail -1 "$tmp/out")"; fail=1; }
grep -q '^failed:.*tests/test_silent.sh' "$tmp/out" ||
	{ echo "FAIL: exit 77 without a reason was not counted as failed"; fail=1; }
grep -q '^failed:.*tests/test_tool.sh' "$tmp/out" ||
	{ echo "FAIL: a missing tool was not counted as failed"; fail=1; }
grep -q 'podkernel-no-such-tool is not installed' "$tmp/out" ||
	{ echo "FAIL: need_tool did not name the missing tool"; fail=1; }
grep -q '^   tests/test_skip.sh: test_skip.sh: no frobnicator on this machine$' "$tmp/out" ||
	{ echo "FAIL: the skip reason is not repeated"; fail=1; }

(cd "$tmp/empty" && sh "$PODKERNEL_SRC/tests/run-tests.sh" build) > "$tmp/out2" 2>&1 &&
	{ echo "FAIL: a build without Check suites passed"; fail=1; }
[ $fail = 0 ] || cat "$tmp/out"
[ $fail = 0 ] && echo "test_run_tests: all passed"
exit $fail
