#!/bin/sh
# deploy/pin-images.sh with a stand-in container engine (none runs here):
# it builds both targets, pushes REGISTRY/podkernel/NAME:VERSION and writes
# the digests the pushes reported into deploy/images, after which every
# rendered base runs REGISTRY/podkernel/NAME@DIGEST; a push that reports no
# digest leaves the file as it was.  check_rendered.py refuses an image by
# tag.
set -eu
: "${PODKERNEL_SRC:?}"
. "$PODKERNEL_SRC/tests/need.sh"
need_tool kubectl python3
WORK=$(mktemp -d "${TMPDIR:-/tmp}/podkernel-pin.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$PODKERNEL_SRC"
VERSION=$(sed -n 's/^VERSION *:= *//p' Makefile)
mkdir "$WORK/src"
cp -r deploy Makefile Containerfile "$WORK/src/"
# podman as the stand-in: build records its target, push --digestfile writes
# a digest derived from the reference (docker's form prints it instead)
cat > "$WORK/podman" <<'STUB'
#!/bin/sh
echo "$*" >> "$STUB_LOG"
case $1 in
build) ;;
push)
	[ "$2" = --digestfile ] || exit 3
	[ -n "${STUB_NO_DIGEST:-}" ] && exit 0
	printf 'sha256:%s' "$(printf %s "$4" | sha256sum | cut -c1-64)" > "$3" ;;
*) exit 3 ;;
esac
STUB
chmod +x "$WORK/podman"
export STUB_LOG="$WORK/log"
ENGINE="$WORK/podman" sh "$WORK/src/deploy/pin-images.sh" reg.example.org:5000/ml > "$WORK/out"
for img in podagent podkerneld; do
	ref=reg.example.org:5000/ml/podkernel/$img:$VERSION
	grep -qx "build --target $img -t $ref ." "$WORK/log" || fail "no build of $img: $(cat "$WORK/log")"
	d=sha256:$(printf %s "$ref" | sha256sum | cut -c1-64)
	grep -qx "    digest: $d" "$WORK/src/deploy/images/kustomization.yaml" || fail "$img: digest not written"
	eval "want_$img=reg.example.org:5000/ml/podkernel/$img@$d"
done
kubectl kustomize "$WORK/src/deploy/agent" | grep -q "image: $want_podagent\$" || fail "agent does not run the pinned podagent"
kubectl kustomize "$WORK/src/deploy/scheduler" | grep -q "image: $want_podkerneld\$" ||
	fail "attach does not run the pinned podkerneld"
(cd "$WORK/src" && kubectl kustomize deploy/standalone | python3 "$PODKERNEL_SRC/tests/deploy/check_rendered.py" standalone "$VERSION" x > /dev/null) ||
	fail "the pinned appliance does not pass check_rendered.py"
# no digest reported: nothing written
cp "$WORK/src/deploy/images/kustomization.yaml" "$WORK/before"
if STUB_NO_DIGEST=1 ENGINE="$WORK/podman" sh "$WORK/src/deploy/pin-images.sh" other.example.org > /dev/null 2> "$WORK/err"; then
	fail "a push without a digest was accepted"
fi
grep -q 'reported no digest' "$WORK/err" || fail "no digest: $(cat "$WORK/err")"
cmp -s "$WORK/before" "$WORK/src/deploy/images/kustomization.yaml" || fail "a failed pin rewrote deploy/images"
# an image by tag is refused on the rendered YAML
sed -i '/^components:/,/images/d' "$WORK/src/deploy/standalone/kustomization.yaml"
(cd "$WORK/src" && kubectl kustomize deploy/standalone | python3 "$PODKERNEL_SRC/tests/deploy/check_rendered.py" standalone "$VERSION" x > "$WORK/out") &&
	fail "an image by tag passed check_rendered.py"
grep -q 'image podkernel/podkerneld:.* is not REGISTRY/PATH@sha256:DIGEST' "$WORK/out" || fail "tag: $(cat "$WORK/out")"
echo "test_pin_images: both images pinned by digest, a push without one refused, tags refused"
