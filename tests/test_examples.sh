#!/bin/sh
# The example files can be applied side by side, as the docs apply them: no
# two of them make the same object (kind, namespace, name), counting what
# their Jobs and JobSets compile into (a JobSet's Workload and groups), so
# applying one never takes over another's groups; and every ownerReference
# they write carries the uid kube-apiserver requires.
set -u
: "${PODKERNEL_BIN:?}" "${PODKERNEL_SRC:?}"
. "$PODKERNEL_SRC/tests/need.sh"
need_tool python3
python3 -c 'import yaml' 2> /dev/null || { echo "FAIL: python3-yaml is not installed (make deps)" >&2; exit 1; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/podkernel-examples.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT
cd "$PODKERNEL_SRC" || exit 1
fail=0
files=$(ls examples/*/*.yaml)
for f in $files; do
	out="$WORK/$(echo "$f" | tr / _).json"
	"$PODKERNEL_BIN/podctl" compile -f "$f" -o json > "$out" 2> "$WORK/err" ||
		{ echo "FAIL: podctl compile -f $f"; cat "$WORK/err"; fail=1; }
done
python3 - "$WORK" $files <<'PY' || fail=1
import json, os, sys, yaml
work, files = sys.argv[1], sys.argv[2:]
owner, bad = {}, 0
for f in files:
    compiled = json.load(open(os.path.join(work, f.replace("/", "_") + ".json")))
    for o in compiled.get("items", []):
        m = o.get("metadata", {})
        if o.get("kind") == "Namespace":
            continue   # shared on purpose: several examples use one namespace
        k = (o.get("kind"), m.get("namespace", ""), m.get("name"))
        if k in owner and owner[k] != f:
            print("FAIL: %s and %s both make %s %s/%s" % (owner[k], f, k[0], k[1], k[2]))
            bad += 1
        owner.setdefault(k, f)
    for o in yaml.safe_load_all(open(f)):
        for r in ((o or {}).get("metadata") or {}).get("ownerReferences") or []:
            if not r.get("uid"):
                print("FAIL: %s: %s %s: an ownerReference to %s %s without a uid" %
                      (f, o["kind"], o["metadata"]["name"], r.get("kind"), r.get("name")))
                bad += 1
sys.exit(1 if bad else 0)
PY
[ $fail = 0 ] && echo "ok: $(echo "$files" | wc -w) example files, no object made twice, every ownerReference with a uid"
exit $fail
