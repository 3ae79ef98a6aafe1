#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Pin the kustomize bases to images by digest:
#
#   sh deploy/pin-images.sh REGISTRY      # e.g. registry.example.com/team
#
# builds podagent and podkerneld from the Containerfile (podman, or
# ENGINE=docker), tags them REGISTRY/podkernel/NAME:VERSION, pushes them and
# rewrites deploy/images/kustomization.yaml with REGISTRY/podkernel/NAME and
# the digest the registry returned for each, so that every base
# (components: [../images]) runs exactly what was pushed.  Nothing is
# written unless both pushes report a sha256 digest.
set -eu
REG=${1:?usage: pin-images.sh REGISTRY}
ENGINE=${ENGINE:-podman}
cd "$(dirname "$0")/.."
VERSION=$(sed -n 's/^VERSION *:= *//p' Makefile)
T=$(mktemp -d "${TMPDIR:-/tmp}/podkernel-pin.XXXXXX")
trap 'rm -rf "$T"' EXIT
for img in podagent podkerneld; do
	ref="$REG/podkernel/$img:$VERSION"
	"$ENGINE" build --target "$img" -t "$ref" .
	if [ "$(basename "$ENGINE")" = docker ]; then
		# docker push ends with "VERSION: digest: sha256:... size: N"
		"$ENGINE" push "$ref" | tee "$T/push"
		sed -n 's/.*digest: \(sha256:[0-9a-f]*\).*/\1/p' "$T/push" | tail -1 > "$T/$img"
	else
		"$ENGINE" push --digestfile "$T/$img" "$ref"
	fi
	d=$(cat "$T/$img" 2> /dev/null || true)
	echo "$d" | grep -Eqx 'sha256:[0-9a-f]{64}' ||
		{ echo "pin-images: $ENGINE push $ref reported no digest ('$d')" >&2; exit 1; }
done
out=deploy/images/kustomization.yaml
sed '/^images:/,$d' "$out" > "$T/k"
{
	echo "images:"
	for img in podagent podkerneld; do
		echo "  - name: podkernel/$img"
		echo "    newName: $REG/podkernel/$img"
		echo "    digest: $(cat "$T/$img")"
	done
} >> "$T/k"
cat "$T/k" > "$out"
echo "pinned: $REG/podkernel/podagent@$(cat "$T/podagent") $REG/podkernel/podkerneld@$(cat "$T/podkerneld")"
