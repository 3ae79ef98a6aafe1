#!/bin/sh
# Run every Check suite under BUILD/tests with valgrind's memcheck: no fork
# (so the tests run in the process valgrind watches), every error and every
# definite or indirect leak fails the suite.  Closing line: "N passed, N failed".
BUILD=${1:-build/vg}
export CK_FORK=no
export CK_DEFAULT_TIMEOUT=600
export PODKERNEL_SRC="$(pwd)"
pass=0; fail=0; failed=""
for t in $(find "$BUILD/tests" -type f -name 'test_*' -perm -u+x 2>/dev/null | sort); do
	echo "== valgrind $t"
	if valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
		--show-leak-kinds=definite,indirect "$t" >"$t.vg.log" 2>&1; then
		pass=$((pass + 1)); tail -1 "$t.vg.log"
	else
		fail=$((fail + 1)); failed="$failed $t"; tail -30 "$t.vg.log"
	fi
done
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
