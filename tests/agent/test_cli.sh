#!/bin/sh
# podagent's command line: --help/--version, exit 2 on bad usage and bad
# input (naming the file or option; hostile --hwloc-xml files), --nfd-dir
# (created, only keys nfd-master accepts), and `--once -o json|yaml` on every
# hwloc fixture with the counts the fixtures' README promises.
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

# --hwloc-xml is hostile input to libhwloc: nesting and size are checked
# before hwloc sees the file (100,000 nested elements crashed it; /dev/zero
# grew without end), exit 2 naming the file.
python3 -c 'import sys; n = 100000; sys.stdout.write("<?xml version=\"1.0\"?>\n<topology version=\"2.0\">" + "<object type=\"Group\">" * n + "</object>" * n + "</topology>\n")' >"$tmp/deep.xml"
expect 2 "deep.xml:2:" --once --no-udev --no-netlink --hwloc-xml "$tmp/deep.xml"
grep -q "elements nested deeper than 256 levels" "$tmp/err" ||
	{ echo "deep.xml: message"; cat "$tmp/err"; fail=1; }
expect 2 "/dev/zero: larger than 16777216 bytes" --once --no-udev --no-netlink --hwloc-xml /dev/zero
head -c 17000000 /dev/zero | tr '\0' ' ' >"$tmp/big.xml"
expect 2 "big.xml: larger than 16777216 bytes" --once --no-udev --no-netlink --hwloc-xml "$tmp/big.xml"
printf '<?xml version="1.0"?>\n<topology version="2.0">\n  <object type="Machine" os_index="0"\n' >"$tmp/open.xml"
expect 2 "open.xml:3:3: not an hwloc XML export: markup not closed" --once --no-udev --no-netlink \
	--hwloc-xml "$tmp/open.xml"
# --nfd-dir is created like mkdir -p, and holds only keys nfd-master accepts
# (no kubernetes.io/hostname); a path that cannot be a directory is exit 2.
expect 0 '"kind": "Node"' --once --no-udev --no-netlink --hwloc-xml "$FX/power8gpudistances.xml" \
	--node-name n1 --nfd-dir "$tmp/nfd/features.d" -o json
if [ -f "$tmp/nfd/features.d/podagent" ]; then
	grep -q '^numa.podkernel.dev/count=2$' "$tmp/nfd/features.d/podagent" ||
		{ echo "nfd file lacks the labels"; cat "$tmp/nfd/features.d/podagent"; fail=1; }
	if grep -q 'kubernetes.io' "$tmp/nfd/features.d/podagent"; then
		echo "nfd file has a kubernetes.io key"; fail=1
	fi
else
	echo "--nfd-dir: $tmp/nfd/features.d/podagent was not written"; fail=1
fi
: >"$tmp/plain"
expect 2 "--nfd-dir $tmp/plain/features.d: cannot create the directory: Not a directory" \
	--once --no-udev --no-netlink --hwloc-xml "$FX/power8gpudistances.xml" --node-name n1 \
	--nfd-dir "$tmp/plain/features.d"

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
