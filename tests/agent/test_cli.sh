#!/bin/sh
# podagent's command line: --help/--version, exit 2 on bad usage and bad
# input (naming the file or option), and `--once -o json|yaml` on every hwloc
# fixture with the counts the fixtures' README promises.
set -u
: "${PODKERNEL_BIN:?}" "${PODKERNEL_SRC:?}"
AGENT=$PODKERNEL_BIN/podagent
FX=$PODKERNEL_SRC/tests/fixtures/hwloc
. "$PODKERNEL_SRC/tests/need.sh"
need_file "$FX"
need_tool python3
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
expect() { # expect RC WHAT-IN-STDERR ARGS...
	want=$1 msg=$2
	shift 2
	"$AGENT" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ $rc != "$want" ] || ! grep -qF -- "$msg" "$tmp/err" "$tmp/out"; then
		echo "podagent $*: exit $rc (want $want), output lacks \"$msg\""
		cat "$tmp/err"
		fail=1
	fi
}
expect 0 "Usage: podagent" --help
expect 0 "podagent 0." --version
expect 2 "unrecognized option" --frobnicate
expect 2 "expected json or yaml" --once -o xml
expect 2 "-o needs --once" -o json
expect 2 "--host-index: expected a number" --once --host-index -3
expect 2 "/nonexistent.xml" --once --hwloc-xml /nonexistent.xml --no-udev --no-netlink
printf 'apiVersion: podkernel.dev/v1alpha1\nkind: Board\nspec: [\n' >"$tmp/bad.yaml"
expect 2 "bad.yaml:" --once --board "$tmp/bad.yaml"
expect 2 "Bad_Name" --once --no-udev --no-netlink --hwloc-xml "$FX/power8gpudistances.xml" \
	--node-name Bad_Name
expect 2 "expected an http:// or https:// URL" --once --publish ftp://x --no-udev --no-netlink

for f in power8gpudistances:2:4:nvidia 24em64t-2n6c2t-pci:2:3:nvidia \
	16intel64-manyVFs:2:0: 192em64t-24n8c2t:24:0:; do
	IFS=: read -r name numa accel vendor <<EOT
$f
EOT
	for fmt in json yaml; do
		"$AGENT" --once --no-udev --no-netlink --hwloc-xml "$FX/$name.xml" --node-name n1 \
			-o $fmt >"$tmp/node.$fmt" 2>"$tmp/err" || { echo "$name: exit $?"; cat "$tmp/err"; fail=1; }
	done
	python3 - "$tmp/node.json" "$tmp/node.yaml" "$numa" "$accel" "$vendor" <<'PY' || { echo "fixture $name"; fail=1; }
import json, sys
node = json.load(open(sys.argv[1]))
yaml_text = open(sys.argv[2]).read()
numa, accel, vendor = sys.argv[3], sys.argv[4], sys.argv[5]
labels = node["metadata"]["labels"]
assert labels["numa.podkernel.dev/count"] == numa, labels
assert labels["accelerator.podkernel.dev/count"] == accel, labels
assert labels.get("accelerator.podkernel.dev/vendor", "") == vendor, labels
assert len(json.loads(node["metadata"]["annotations"]["accelerator.podkernel.dev/devices"])) == int(accel)
assert "kind: Node" in yaml_text and ("numa.podkernel.dev/count: \"%s\"" % numa) in yaml_text, yaml_text
PY
done
[ $fail = 0 ] && echo "test_cli: all passed"
exit $fail
