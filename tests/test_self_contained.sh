#!/bin/sh
# The repository is self-contained: a clone of HEAD on its own, with nothing
# beside it (no sibling folder of shared files), holds every file the tests, scripts and examples
# read.  On such a clone in a fresh temporary folder:
#  1. no tracked source, script, Makefile or document names a path outside
#     the tree (a parent of the source root, a developer's absolute path);
#  2. every hwloc export the tests name is in tests/fixtures/hwloc, and its
#     README lists it;
#  3. the agent scripts that load those exports (test_cli.sh,
#     test_podkerneld.sh) pass when run from the clone with PODKERNEL_SRC
#     pointing at it and the programs of this build.
# Uncommitted files are checked by step 1 in the working tree as well.
set -u
: "${PODKERNEL_BIN:?}" "${PODKERNEL_SRC:?}"
. "$PODKERNEL_SRC/tests/need.sh"
need_tool git grep sed
tmp=$(mktemp -d "${TMPDIR:-/tmp}/podkernel-clone.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0

# Written with bracket expressions so that this file does not match itself.
OUTSIDE='[.][.]/shared|/work/(shared|main|wt-)|PODKERNEL_SRC[}]?/[.][.]|SRCDIR "/[.][.]|[(]CURDIR[)]/[.][.]|srcdir[)]?/[.][.]/'

# outside_refs ROOT FILE...: print FILE:LINE of every reference out of the tree
outside_refs() {
	(cd "$1" && shift && grep -nIE "$OUTSIDE" "$@" 2>/dev/null)
}

# A benchmark (and the page that documents it) may read a public trace from
# the sibling folder when it is there: its rows say SKIPPED when it is not, and
# no test, script or example reads it.
TRACE_ROWS='^(tests/bench/[^:]*|docs/[^:]*[.]md):[0-9]+:.*[.][.]/shared/traces/'

if git -C "$PODKERNEL_SRC" rev-parse --verify -q HEAD > /dev/null 2>&1; then
	head=$(git -C "$PODKERNEL_SRC" rev-parse HEAD)
	git clone -q --no-checkout "$PODKERNEL_SRC" "$tmp/podkernel" &&
		git -C "$tmp/podkernel" checkout -q "$head" ||
		{ echo "FAIL: cannot clone $PODKERNEL_SRC at $head"; exit 1; }
	R=$tmp/podkernel
	# the working tree's uncommitted and untracked files, too
	files=$(cd "$PODKERNEL_SRC" && git ls-files -co --exclude-standard | grep -v '^tests/fixtures/')
	refs=$(cd "$PODKERNEL_SRC" && echo "$files" | tr '\n' '\0' | xargs -0 grep -nIE "$OUTSIDE" 2>/dev/null | grep -vE "$TRACE_ROWS")
	[ -z "$refs" ] || { echo "FAIL: the working tree reads outside itself:"; echo "$refs"; fail=1; }
else
	skip "$PODKERNEL_SRC is not a git checkout: cannot make a clean clone"
fi

# 1. the clone's tracked files
files=$(git -C "$R" ls-files | grep -v '^tests/fixtures/')
refs=$(cd "$R" && echo "$files" | tr '\n' '\0' | xargs -0 grep -nIE "$OUTSIDE" 2>/dev/null |
	grep -vE "$TRACE_ROWS")
[ -z "$refs" ] || { echo "FAIL: files that read outside the tree:"; echo "$refs"; fail=1; }

# 2. every hwloc export named by a test is vendored and documented
# (files a test writes itself, under $tmp, $T or $WORK, are not fixtures)
names=$(cd "$R" && grep -rhoE '[A-Za-z0-9_-]+[.]xml' tests/agent tests/e2e | sort -u)
made=$(cd "$R" && grep -rhoE '[$](tmp|T|WORK)/[A-Za-z0-9_-]+[.]xml' tests/agent tests/e2e |
	sed 's|.*/||' | sort -u)
n=0
for x in $names; do
	case $x in nonexistent.xml | FIXTURE.xml | name.xml) continue ;; esac
	echo "$made" | grep -qx "$x" && continue
	n=$((n + 1))
	[ -f "$R/tests/fixtures/hwloc/$x" ] || { echo "FAIL: tests name $x, not in tests/fixtures/hwloc"; fail=1; }
	grep -q "^| $x " "$R/tests/fixtures/hwloc/README.md" ||
		{ echo "FAIL: tests/fixtures/hwloc/README.md does not say where $x comes from"; fail=1; }
done
[ "$n" -ge 4 ] || { echo "FAIL: only $n hwloc exports named by the tests (expected 4)"; fail=1; }
[ -f "$R/docs/CONTRACT.md" ] || { echo "FAIL: docs/CONTRACT.md is not in the clone"; fail=1; }
grep -q '(docs/CONTRACT.md)' "$R/README.md" || { echo "FAIL: README.md does not link docs/CONTRACT.md"; fail=1; }

# 3. the agent's fixture lookups, from the clone
for t in tests/agent/test_cli.sh tests/agent/test_podkerneld.sh; do
	PODKERNEL_SRC=$R sh "$R/$t" > "$tmp/out" 2>&1 ||
		{ echo "FAIL: $t from a clean clone:"; tail -20 "$tmp/out"; fail=1; }
done
[ $fail = 0 ] && echo "test_self_contained: all passed"
exit $fail
