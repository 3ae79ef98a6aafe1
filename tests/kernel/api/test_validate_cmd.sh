#!/bin/sh
# podctl validate: the data-file scenarios of tests/scenarios/validate (exact
# stderr and exit status), plus usage errors, several files and stdin.
set -u
PODCTL="${PODKERNEL_BIN:-build/bin}/podctl"
SRC="${PODKERNEL_SRC:-.}"
DIR="$SRC/tests/scenarios/validate"
[ -x "$PODCTL" ] || { echo "FAIL: no podctl at $PODCTL" >&2; exit 1; }
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check() { # name expected-rc actual-rc
	if [ "$2" != "$3" ]; then
		echo "FAIL $1: exit $3, expected $2" >&2
		fail=1
	fi
}

for f in "$DIR"/*.yaml "$DIR"/*.json; do
	[ -e "$f" ] || continue
	name=$(basename "$f")
	base=${name%.*}
	(cd "$DIR" && "$PODCTL" validate -f "$name") >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ -e "$DIR/$base.err" ]; then
		check "$name" 2 $rc
		if ! diff -u "$DIR/$base.err" "$tmp/err" >&2; then
			echo "FAIL $name: stderr differs" >&2
			fail=1
		fi
	else
		check "$name" 0 $rc
		[ -s "$tmp/err" ] && { echo "FAIL $name: unexpected stderr:" >&2; cat "$tmp/err" >&2; fail=1; }
		grep -q "^$name: [0-9]* objects\? valid\$" "$tmp/out" || { echo "FAIL $name: no summary" >&2; fail=1; }
	fi
done

# Usage errors exit 2.
"$PODCTL" validate >/dev/null 2>"$tmp/err"; check "no -f" 2 $?
grep -q "at least one -f FILE" "$tmp/err" || { echo "FAIL no -f: message" >&2; fail=1; }
"$PODCTL" validate --bogus >/dev/null 2>&1; check "--bogus" 2 $?
"$PODCTL" validate -f "$tmp/missing.yaml" >/dev/null 2>"$tmp/err"; check "missing file" 2 $?
grep -q "missing.yaml: No such file or directory" "$tmp/err" || { echo "FAIL missing: message" >&2; fail=1; }

# Several files: all are checked; a duplicate across files is reported.
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: i}]}\n' >"$tmp/a.yaml"
cp "$tmp/a.yaml" "$tmp/b.yaml"
(cd "$tmp" && "$PODCTL" validate -f a.yaml -f b.yaml) >"$tmp/out" 2>"$tmp/err"; check "duplicate" 2 $?
grep -qx 'b.yaml: Pod/p: metadata.name: Duplicate value: "p" (also in a.yaml)' "$tmp/err" ||
	{ echo "FAIL duplicate: message" >&2; cat "$tmp/err" >&2; fail=1; }
grep -qx 'a.yaml: 1 object valid' "$tmp/out" || { echo "FAIL duplicate: summary" >&2; fail=1; }

# Standard input as "-".
"$PODCTL" validate -f - <"$tmp/a.yaml" >"$tmp/out" 2>&1; check "stdin" 0 $?

exit $fail
