#!/bin/sh
# The man pages document what the programs say they do: every long option
# that `PROGRAM --help` prints appears in its rendered man page, every
# podctl command of `podctl --help` (and of `podctl board --help`) has an
# entry, and no rendered page shows a stray quote (an unbalanced .BI/.BR
# argument) or an option the program no longer has.
set -eu
: "${PODKERNEL_BIN:?}" "${PODKERNEL_SRC:?}"
. "$PODKERNEL_SRC/tests/need.sh"
need_tool man
WORK=$(mktemp -d "${TMPDIR:-/tmp}/podkernel-man.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
bad=0
fail() { echo "FAIL: $*"; bad=1; }

render() { MANWIDTH=200 man --warnings -l "$PODKERNEL_SRC/docs/man/$1" 2> "$WORK/warn" > "$WORK/$1.txt"
	[ -s "$WORK/warn" ] && fail "$1: man warns: $(cat "$WORK/warn")"; return 0; }

for page in podctl.1 podkerneld.8 podagent.8; do
	prog=${page%.*}
	render "$page"
	"$PODKERNEL_BIN/$prog" --help > "$WORK/$prog.help" 2>&1 || true
	[ -s "$WORK/$prog.help" ] || fail "$prog --help printed nothing"
	for opt in $(grep -o -- '--[a-z][a-z0-9-]*' "$WORK/$prog.help" | sort -u); do
		grep -q -- "$opt\\b" "$WORK/$page.txt" || fail "$page does not document $opt ($prog --help has it)"
	done
	# a quote left at the end of a rendered line is an unbalanced macro argument
	grep -n '"$' "$WORK/$page.txt" > "$WORK/quotes" && fail "$page renders a stray quote: $(cat "$WORK/quotes")"
	# options the page names that no --help of the program knows any more
	for opt in $(grep -o -- '--[a-z][a-z0-9-]*' "$WORK/$page.txt" | sort -u); do
		grep -rqsE -- "\"(--)?${opt#--}[\"=]" "$PODKERNEL_SRC/kernel" "$PODKERNEL_SRC/agent" ||
			fail "$page documents $opt, which no program parses"
	done
done

# podctl's commands: each word of `podctl --help`'s command lines has an entry.
for cmd in schedule compile validate simulate apply get delete describe top map completion; do
	grep -q "^ *$cmd\\b" "$WORK/podctl.1.txt" || fail "podctl.1 has no entry for '$cmd'"
done
"$PODKERNEL_BIN/podctl" board --help > "$WORK/board.help" 2>&1 || true
for sub in $(sed -n 's/^ *podctl board \([a-z]*\).*/\1/p' "$WORK/board.help" | sort -u); do
	grep -q "^ *board $sub\\b" "$WORK/podctl.1.txt" || fail "podctl.1 has no entry for 'board $sub'"
done
[ "$bad" = 0 ] || exit 1
echo "test_man_pages: the man pages cover every option and command --help prints"
