#!/bin/sh
# The README's layout table has a row for every top-level folder and every
# kernel/* folder of the tree (tests/* and deploy/* are described in their
# parent's row), and every path in its first column exists.
set -u
SRC="${PODKERNEL_SRC:-.}"
cd "$SRC" || exit 1
table=$(sed -n '/^## Layout/,/^## [A-Z]/p' README.md)
[ -n "$table" ] || { echo "FAIL: README.md has no Layout section"; exit 1; }
fails=0
for d in $(git ls-files | awk -F/ 'NF > 1 && $1 != "kernel" { print $1 "/" }
	NF > 2 && $1 == "kernel" { print $1 "/" $2 "/" }' | sort -u); do
	echo "$table" | grep -qF "| \`$d\`" || { echo "FAIL: $d has no row in the layout table"; fails=$((fails + 1)); }
done
for p in $(echo "$table" | grep -o '^| `[^`]*`' | sed 's/^| `//; s/`$//'); do
	[ -e "$p" ] || { echo "FAIL: the layout table names $p, which is not in the tree"; fails=$((fails + 1)); }
done
[ "$fails" = 0 ] || exit 1
echo "test_readme_layout: the layout table and the tree agree"
