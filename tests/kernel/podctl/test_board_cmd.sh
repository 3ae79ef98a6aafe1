#!/bin/sh
# podctl board check|show|nodes: exit codes, messages and outputs.
set -u
PODCTL="${PODKERNEL_BIN:?}/podctl"
SRC="${PODKERNEL_SRC:?}"
[ -x "$PODCTL" ] || { echo "FAIL: no podctl in $PODKERNEL_BIN" >&2; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# expect RC CMD...: run, keep stdout/stderr in $T/out, $T/err
expect() {
	want=$1; shift
	"$@" >"$T/out" 2>"$T/err"; rc=$?
	[ "$rc" = "$want" ] || fail "$* exited $rc, expected $want: $(head -3 "$T/err")"
}
has() { grep -qF -- "$2" "$T/$1" || fail "$1 lacks '$2': $(head -5 "$T/$1")"; }

# check: every board is valid, one line each
expect 0 "$PODCTL" board check "$SRC"/boards/*.yaml
[ "$(grep -c ': ok$' "$T/out")" -ge 4 ] || fail "check: fewer than 4 ok lines"
has out "$SRC/boards/tpu-superslice.yaml: ok"

# check: a broken board, the error names FILE:LINE:COL
sed 's/cube: 4x4x4/cube: 4x4/' "$SRC/boards/tpu-superslice.yaml" >"$T/bad.yaml"
expect 2 "$PODCTL" board check "$T/bad.yaml"
line=$(grep -n 'cube: 4x4$' "$T/bad.yaml" | cut -d: -f1)
has err "$T/bad.yaml:$line:11: spec.torus.cube: expected a shape like 4x4x4, got \"4x4\""
[ -s "$T/out" ] && fail "check of a bad board printed on stdout"
printf 'apiVersion: podkernel.dev/v1alpha1\nkind: Board\nmetadata: {name: x}\nspec:\n  frob: 1\n' >"$T/unknown.yaml"
expect 2 "$PODCTL" board check "$T/unknown.yaml"
has err "$T/unknown.yaml:5:3: spec: unknown field \"frob\""
printf 'a: [\n' >"$T/syntax.yaml"
expect 2 "$PODCTL" board check "$T/syntax.yaml"
has err "$T/syntax.yaml:2:1:"
# one good and one bad: the bad one decides the exit code, the good one is still reported
expect 2 "$PODCTL" board check "$SRC/boards/tpu-cube.yaml" "$T/bad.yaml"
has out "tpu-cube.yaml: ok"
# a missing file is bad input the user named: exit 2, as every command
expect 2 "$PODCTL" board check "$T/missing.yaml"
has err "$T/missing.yaml: No such file or directory"

# usage errors
expect 2 "$PODCTL" board
expect 2 "$PODCTL" board frob "$SRC/boards/tpu-cube.yaml"
has err "unknown subcommand 'frob'"
expect 2 "$PODCTL" board check
expect 2 "$PODCTL" board nodes "$SRC/boards/tpu-cube.yaml" -o xml
has err "-o: expected json or yaml, got 'xml'"
expect 2 "$PODCTL" board nodes "$SRC/boards/tpu-cube.yaml" --superslices 0
expect 2 "$PODCTL" board nodes "$SRC/boards/tpu-cube.yaml" --superslices
expect 2 "$PODCTL" board show "$SRC/boards/tpu-cube.yaml" -o json
expect 0 "$PODCTL" board --help
has out "podctl board nodes FILE"

# show: the summary
expect 0 "$PODCTL" board show "$SRC/boards/tpu-superslice.yaml"
has out "board:        tpu-superslice"
has out "cubes:        16 per superslice"
has out "cluster:      512 hosts, 2048 chips"
has out "topology.podkernel.dev/superslice"
has out "16 leave each host"
expect 0 "$PODCTL" board show "$SRC/boards/tpu-superslice.yaml" --superslices 4
has out "cluster:      1024 hosts, 4096 chips"
expect 0 "$PODCTL" board show "$SRC/boards/gpu-cluster.yaml"
has out "torus:        none"
has out "topology.podkernel.dev/rack"

# nodes: a List of Nodes with the contract's labels
expect 0 "$PODCTL" board nodes "$SRC/boards/tpu-superslice.yaml"
[ "$(grep -c '"kind": "Node"' "$T/out")" = 512 ] || fail "nodes: expected 512 Nodes"
has out '"kind": "List"'
has out '"kubernetes.io/hostname": "tpu-ss1-h255"'
has out '"topology.podkernel.dev/cube": "ss1-c15"'
has out '"topology.podkernel.dev/coords": "6.6.15"'
has out '"accelerator.podkernel.dev/vendor": "google"'
has out '"google.com/tpu": "4"'
expect 0 "$PODCTL" board nodes "$SRC/boards/tpu-superslice.yaml" --superslices 1 -o yaml
[ "$(grep -c '^  kind: Node$' "$T/out")" = 256 ] || fail "nodes --superslices 1: expected 256 Nodes"
has out "kind: List"
has out "topology.podkernel.dev/superslice: ss0"
expect 0 "$PODCTL" board nodes "$SRC/boards/gb200-nvl72.yaml" -o yaml
[ "$(grep -c '^  kind: Node$' "$T/out")" = 144 ] || fail "nodes gb200: expected 144 Nodes"
has out "topology.podkernel.dev/nvlink-domain: b1-nvl3"
has out "accelerator.podkernel.dev/vendor: nvidia"
grep -q coords "$T/out" && fail "a board without torus published coordinates"
# a cluster too large is refused, not truncated
sed 's/count: 4$/count: 64/; s/count: 8$/count: 1024/' "$SRC/boards/gpu-cluster.yaml" >"$T/huge.yaml"
expect 0 "$PODCTL" board check "$T/huge.yaml"
expect 2 "$PODCTL" board nodes "$T/huge.yaml" --superslices 3
has err "make more hosts than supported"
expect 2 "$PODCTL" board nodes "$T/bad.yaml"

# the nodes read back through the object codec as valid Nodes
if "$PODCTL" validate --help >/dev/null 2>&1; then
	"$PODCTL" board nodes "$SRC/boards/gpu-cluster.yaml" >"$T/nodes.json"
	expect 0 "$PODCTL" validate -f "$T/nodes.json"
fi

[ "$fails" = 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "podctl board: all checks passed"
