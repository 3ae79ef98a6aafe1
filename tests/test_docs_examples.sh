#!/bin/sh
# Every command the documentation shows runs: the fenced ```sh blocks of
# README.md and docs/*.md, each file's blocks in order as one script under
# `sh -e`, from the root of a clean copy of the tree (the files git knows, no
# build outputs) with the programs under test on PATH and as build/bin (the
# docs assume `make` has run).  A block that fails fails the test, naming the
# file and the block's first line.  Illustrations that are not meant to run
# as written (synopses, sudo, a real cluster) are fenced ```console or
# ```text instead, and are not run.  Whatever a script starts in the
# background is stopped afterwards (each runs in its own process group).
#
#   test_docs_examples.sh [FILE.md...]   only these (paths from the tree's root)
#
set -u
: "${PODKERNEL_BIN:?}" "${PODKERNEL_SRC:?}" "${PODKERNEL_BUILD:?}"
. "$PODKERNEL_SRC/tests/need.sh"
need_tool git setsid timeout awk ps
WORK=$(mktemp -d "${TMPDIR:-/tmp}/podkernel-docs.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT
TIMEOUT=${PODKERNEL_DOCS_TIMEOUT:-180}

# extract FILE: the file's ```sh blocks as one script; before each block a
# marker line "doc_block FILE:LINE" so that a failure says where it was.
extract() {
	awk -v f="$1" '
		/^```/ && !open { open = 1; run = ($0 == "```sh"); if (run) { n++; print "doc_block " f ":" NR }; next }
		/^```/ && open { open = 0; next }
		open && run { print }
		END { if (open) { print "echo \"" f ": unterminated fence\" >&2; exit 1" } }
	' "$1"
}

cd "$PODKERNEL_SRC" || exit 1
if [ $# -gt 0 ]; then
	docs="$*"
else
	docs=$(ls README.md docs/*.md)
fi
fail=0
ran=0
for doc in $docs; do
	grep -q '^```sh$' "$doc" || continue
	ran=$((ran + 1))
	root="$WORK/$(echo "$doc" | tr / _)"
	mkdir -p "$root"
	# the tree as a fresh clone has it: tracked and new files, nothing ignored
	git ls-files -co --exclude-standard -z | grep -zv '^tests/clients/js/node_modules$' |
		(cd "$PODKERNEL_SRC" && xargs -0 cp --parents -d -t "$root" 2> /dev/null) || true
	# build/bin: the programs under test, as `make` leaves them; a document
	# that runs make gets a copy of the whole build under test instead,
	# newer than its sources, so that make has nothing (or one file: the
	# /version header of a tree without .git) to compile
	mkdir -p "$root/build"
	mflags=""
	if extract "$doc" | grep -q '^make\b'; then
		for d in bin lib obj gen; do
			cp -a "$PODKERNEL_SRC/$PODKERNEL_BUILD/$d" "$root/build/$d" || exit 1
		done
		(cd "$root" && find . -path ./build -prune -o -type f -exec touch -h -d '2001-01-01' {} +)
		ldd "$PODKERNEL_BIN/podctl" 2> /dev/null | grep -q libasan && mflags="SAN=1 OPT=-O1"
	else
		ln -s "$PODKERNEL_BIN" "$root/build/bin"
	fi
	{
		echo 'doc_block() { DOC_AT=$1; }'
		echo 'trap '"'"'rc=$?; [ $rc = 0 ] || echo "docs: the block at $DOC_AT failed (exit $rc)" >&2'"'"' EXIT'
		extract "$doc"
	} > "$WORK/script.sh"
	t0=$(date +%s)
	(cd "$root" && exec env PATH="$PODKERNEL_BIN:$PATH" HOME="$root" TMPDIR="$root" NO_COLOR=1 \
		KUBECONFIG="" PODKERNEL_SERVER="" PODKERNEL_TOKEN="" MAKEFLAGS="$mflags" \
		setsid timeout -k 5 "$TIMEOUT" sh -e "$WORK/script.sh" > "$WORK/out" 2>&1 < /dev/null) &
	sid=$!
	rc=0
	wait $sid || rc=$?
	# stop what the blocks left running: everything in the script's session
	pids=$(ps -eo pid=,sid= | awk -v s="$sid" '$2 == s { print $1 }')
	[ -n "$pids" ] && kill $pids 2> /dev/null
	if [ $rc != 0 ]; then
		echo "FAIL: $doc (exit $rc)"
		tail -n 40 "$WORK/out" | sed 's/^/  /'
		fail=1
	else
		echo "ok: $doc ($(($(date +%s) - t0)) s)"
	fi
	rm -rf "$root"
done
[ $ran -gt 0 ] || { echo "FAIL: no document has a sh block"; fail=1; }
exit $fail
