#!/bin/sh
# The README's layout table has a row for every top-level folder and every
# kernel/* folder of the tree (tests/* and deploy/* are described in their
# parent's row), and every path in its first column exists.  The README stays
# short (at most 300 lines: the rest is in docs/), docs/README.md (or the
# README) links every page of docs/, and every relative link of README.md and docs/*.md leads to a
# file of the tree (and, with #anchor, to a heading of that file).
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
lines=$(wc -l < README.md)
[ "$lines" -le 300 ] || { echo "FAIL: README.md has $lines lines (at most 300; move the rest to docs/)"; fails=$((fails + 1)); }
for f in docs/*.md; do
	[ "$f" = docs/README.md ] && continue
	grep -qF "](${f#docs/})" docs/README.md || grep -qF "]($f)" README.md ||
		{ echo "FAIL: neither docs/README.md nor README.md links $f"; fails=$((fails + 1)); }
done
# links: [text](path) and [text](path#anchor), relative to the linking file;
# an anchor is a heading as GitHub turns it into one (lower case, spaces to
# dashes, punctuation but - and _ dropped)
python3 - README.md docs/*.md <<'PY' || fails=$((fails + 1))
import os, re, sys
def anchors(path):
    out, fence = set(), False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            fence = not fence
        m = None if fence else re.match(r"^#+ (.*)", line)
        if m:
            a = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
            out.add(a)
    return out
bad = 0
for f in sys.argv[1:]:
    text = open(f, encoding="utf-8").read()
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"^[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
        if not os.path.exists(dest):
            print("FAIL: %s links %s, which is not in the tree" % (f, target)); bad += 1
        elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
            print("FAIL: %s links %s: %s has no such heading" % (f, target, dest)); bad += 1
sys.exit(1 if bad else 0)
PY
[ "$fails" = 0 ] || exit 1
echo "test_readme_layout: the layout table and the tree agree; README.md has $lines lines; the docs' links resolve"
