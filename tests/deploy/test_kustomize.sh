#!/bin/sh
# Every kustomize base under deploy/ renders with `kubectl kustomize` (the
# kustomize built into kubectl), and its objects pass check_rendered.py:
# well-formed, labelled, references resolved, and the rules of each base
# (the agent's RBAC may only get/patch Nodes and manage its Leases, its board
# ConfigMap holds the board, the appliance is one Recreate replica behind a
# Service, the CRDs are the KEP-6012 kinds, every image is pinned by digest
# through the deploy/images component, every Namespace comes before what lives
# in it).  deploy/ itself is the default install (named "default": the agent
# and attach mode).  A base added later (an overlay) is found and rendered too.
set -eu
: "${PODKERNEL_SRC:?}" "${PODKERNEL_BIN:?}"
. "$PODKERNEL_SRC/tests/need.sh"
need_tool kubectl python3
python3 -c 'import yaml' 2> /dev/null || { echo "FAIL: python3-yaml is not installed (make deps)" >&2; exit 1; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/podkernel-kustomize.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cd "$PODKERNEL_SRC"
VERSION=$(sed -n 's/^VERSION *:= *//p' Makefile)
fail=0
n=0
for k in $(find deploy -name kustomization.yaml | sort); do
	dir=$(dirname "$k")
	base=${dir#deploy/}
	[ "$dir" = deploy ] && base=default
	# a Component (deploy/images) is no base: the bases that include it are checked
	grep -q '^kind: Component$' "$k" && continue
	n=$((n + 1))
	if ! kubectl kustomize "$dir" > "$WORK/out.yaml" 2> "$WORK/err"; then
		echo "FAIL: kubectl kustomize $dir"; cat "$WORK/err"; fail=1; continue
	fi
	# the agent's overlays carry their own family's board
	board=deploy/agent/board.yaml
	[ -f "$dir/board.yaml" ] && board="$dir/board.yaml"
	python3 tests/deploy/check_rendered.py "$base" "$VERSION" "$board" \
		< "$WORK/out.yaml" || fail=1
done
# The order check holds: a render with its Namespace moved to the end, or
# left out, is refused (what `kubectl apply` would fail on a fresh cluster).
kubectl kustomize deploy/standalone | python3 -c '
import sys, yaml
objs = [o for o in yaml.safe_load_all(sys.stdin) if o]
ns = [o for o in objs if o["kind"] == "Namespace"]
rest = [o for o in objs if o["kind"] != "Namespace"]
yaml.safe_dump_all(rest + ns if sys.argv[1] == "last" else rest, sys.stdout)' last > "$WORK/late-ns.yaml"
python3 tests/deploy/check_rendered.py standalone "$VERSION" x < "$WORK/late-ns.yaml" > "$WORK/late-ns.out" || true
grep -q 'namespace podkernel-system is rendered after it' "$WORK/late-ns.out" ||
	{ echo "FAIL: a Namespace rendered after its objects is not refused"; fail=1; }
# The install guide creates the Secrets only once the apply has made their namespace.
awk '/kubectl apply -k deploy($|[ \/])/ && !a { a = NR } /create secret/ && !s { s = NR }
	END { exit !(a && s && a < s) }' docs/install.md ||
	{ echo "FAIL: docs/install.md creates a Secret before kubectl apply -k deploy"; fail=1; }
[ "$n" -ge 8 ] || { echo "FAIL: only $n kustomize bases under deploy/"; fail=1; }
# The CRDs are generated from standalone's schemas and columns, never edited.
"$PODKERNEL_BIN/podkerneld" --print-crds > "$WORK/crds.yaml" ||
	{ echo "FAIL: podkerneld --print-crds"; fail=1; }
cmp -s "$WORK/crds.yaml" deploy/crds/crds.yaml ||
	{ echo "FAIL: deploy/crds/crds.yaml is not what podkerneld --print-crds prints (regenerate it)"; fail=1; }
# in a group of one's own (--workload-api): no approval annotation outside *.k8s.io
"$PODKERNEL_BIN/podkerneld" --print-crds --workload-api example.com/v1alpha3 > "$WORK/own.yaml" &&
	[ "$(grep -c '^  group: example.com$' "$WORK/own.yaml")" = 3 ] &&
	grep -q '^  name: podgroups.example.com$' "$WORK/own.yaml" &&
	! grep -q 'api-approved' "$WORK/own.yaml" ||
	{ echo "FAIL: --print-crds --workload-api example.com/v1alpha3: $(head -20 "$WORK/own.yaml")"; fail=1; }
# The agent's board is a valid board file, and the one docs/install.md names.
"$PODKERNEL_BIN/podctl" board check deploy/agent/board.yaml > /dev/null || fail=1
cmp -s deploy/agent/board.yaml boards/tpu-superslice.yaml ||
	{ echo "FAIL: deploy/agent/board.yaml differs from boards/tpu-superslice.yaml"; fail=1; }
# one overlay per hardware family, each with its board as shipped in boards/
for pair in agent-gpu:gpu-cluster agent-gb200:gb200-nvl72; do
	cmp -s "deploy/${pair%%:*}/board.yaml" "boards/${pair#*:}.yaml" ||
		{ echo "FAIL: deploy/${pair%%:*}/board.yaml differs from boards/${pair#*:}.yaml"; fail=1; }
done
# Every image a manifest names is one deploy/images pins, and the bases that
# run a workload include it (nothing runs by tag).
for img in $(grep -rho --include='*.yaml' 'image: podkernel/[a-z]*' deploy | sed 's/image: //' | sort -u); do
	grep -q "name: $img\$" deploy/images/kustomization.yaml ||
		{ echo "FAIL: $img is not pinned in deploy/images"; fail=1; }
done
for k in deploy/agent deploy/standalone deploy/scheduler; do
	grep -q '^  - \(\.\./\)*images' "$k/kustomization.yaml" ||
		{ echo "FAIL: $k does not include deploy/images"; fail=1; }
done
[ $fail = 0 ] && echo "ok"
exit $fail
