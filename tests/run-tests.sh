#!/bin/sh
# Run every Check suite under BUILD/tests and every test_*.sh script under
# tests/, then print one closing line: "N passed, N failed".
# Scripts get PODKERNEL_BIN (the programs) and PODKERNEL_BUILD; a script that
# exits 77 is counted as skipped (a missing capability, said on its stderr).
BUILD=${1:-build/san}
export PODKERNEL_BUILD="$BUILD"
export PODKERNEL_BIN="$(pwd)/$BUILD/bin"
export PODKERNEL_SRC="$(pwd)"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export CK_DEFAULT_TIMEOUT="${CK_DEFAULT_TIMEOUT:-60}"
pass=0; fail=0; skip=0; failed=""
for t in $(find "$BUILD/tests" -type f -name 'test_*' -perm -u+x 2>/dev/null | sort); do
	echo "== $t"
	if "$t"; then pass=$((pass + 1)); else fail=$((fail + 1)); failed="$failed $t"; fi
done
for s in $(find tests -name 'test_*.sh' | sort); do
	echo "== $s"
	sh "$s"; rc=$?
	case $rc in
	0) pass=$((pass + 1)) ;;
	77) skip=$((skip + 1)); echo "   (skipped)" ;;
	*) fail=$((fail + 1)); failed="$failed $s" ;;
	esac
done
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
