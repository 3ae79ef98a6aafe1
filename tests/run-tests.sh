#!/bin/sh
# Run every Check suite under BUILD/tests and every test_*.sh script under
# tests/ (each followed by its wall time in seconds), then print one closing
# line: "N passed, N failed, N skipped".
# Scripts get PODKERNEL_BIN (the programs), PODKERNEL_BUILD and PODKERNEL_SRC.
#
# Skip rules (tests/need.sh): `make deps` installs every tool, so a script
# that cannot run its real part fails.  Only a capability the machine lacks
# may skip, and visibly: exit 77 *and* a line "SKIP: <reason>" on the
# script's output.  An exit 77 without that line counts as failed, and the
# reasons of the skipped scripts are repeated before the closing line.
BUILD=${1:-build/san}
export PODKERNEL_BUILD="$BUILD"
export PODKERNEL_BIN="$(pwd)/$BUILD/bin"
export PODKERNEL_SRC="$(pwd)"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export CK_DEFAULT_TIMEOUT="${CK_DEFAULT_TIMEOUT:-60}"
pass=0; fail=0; skip=0; failed=""; skipped=""; suites=0
log=$(mktemp "${TMPDIR:-/tmp}/podkernel-test.XXXXXX") || exit 1
trap 'rm -f "$log"' EXIT
for t in $(find "$BUILD/tests" -type f -name 'test_*' -perm -u+x 2>/dev/null | sort); do
	echo "== $t"
	suites=$((suites + 1))
	t0=$(date +%s)
	if "$t"; then pass=$((pass + 1)); else fail=$((fail + 1)); failed="$failed $t"; fi
	echo "   ($(($(date +%s) - t0)) s)"
done
if [ "$suites" = 0 ]; then
	echo "no Check suites under $BUILD/tests (build them with make check-build)"
	fail=$((fail + 1)); failed="$failed $BUILD/tests"
fi
for s in $(find tests -name 'test_*.sh' | sort); do
	echo "== $s"
	t0=$(date +%s)
	sh "$s" > "$log" 2>&1; rc=$?
	cat "$log"
	echo "   ($(($(date +%s) - t0)) s)"
	case $rc in
	0) pass=$((pass + 1)) ;;
	77)
		reason=$(grep -m 1 '^SKIP: ' "$log")
		if [ -n "$reason" ]; then
			skip=$((skip + 1)); skipped="$skipped
   $s: ${reason#SKIP: }"
		else
			echo "   exit 77 without a SKIP: reason line: counted as failed"
			fail=$((fail + 1)); failed="$failed $s"
		fi
		;;
	*) fail=$((fail + 1)); failed="$failed $s" ;;
	esac
done
[ -n "$skipped" ] && echo "skipped:$skipped"
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
