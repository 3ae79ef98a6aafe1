#!/bin/sh
# Install the Debian packages podkernel builds and tests with.  A no-op when
# they are all present.  README.md ("Dependencies") says why each is here.
#   deps.sh         everything: the build, the tests, fuzzing, benchmarks
#   deps.sh build   only what `make` needs (make demo): no test tools
set -eu
BUILD_PKGS="build-essential pkg-config
libyaml-dev libjansson-dev libhwloc-dev libudev-dev
libnl-3-dev libnl-route-3-dev libnl-genl-3-dev
libmicrohttpd-dev libgnutls28-dev libcurl4-openssl-dev libsqlite3-dev
libprotobuf-c-dev protobuf-c-compiler"
PKGS="$BUILD_PKGS clang clang-format libclang-rt-14-dev hwloc curl sqlite3
check umockdev libumockdev-dev iproute2 openssl valgrind python3 git
chromium man-db groff-base systemd python3-yaml python3-kubernetes"
only_build=0
if [ "${1:-}" = build ]; then
	only_build=1
	PKGS=$BUILD_PKGS
fi
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
# Node.js runs the official JavaScript client's tests; a newer node already
# installed is kept.
if [ $only_build = 0 ]; then
	command -v node >/dev/null 2>&1 || missing="$missing nodejs"
	command -v npm >/dev/null 2>&1 || missing="$missing npm"
fi
# kubectl: the tests want one within the supported skew of the v1.32 the
# server reports (1.31 or newer, README "Dependencies").  A present kubectl is
# kept whatever its version; only when there is none is Debian's
# kubernetes-client (1.20) installed, and the tests that need a newer one
# print SKIP with the version they found.
need_kubectl=0
[ $only_build = 1 ] || command -v kubectl >/dev/null 2>&1 || need_kubectl=1
# @kubernetes/client-node, pinned in tests/clients/js/package.json (no lock
# file: see tests/clients/js/.npmrc), into tests/clients/js/node_modules.
JS_DIR="$(cd "$(dirname "$0")/.." && pwd)/tests/clients/js"
need_js=0
[ $only_build = 1 ] || [ -f "$JS_DIR/node_modules/@kubernetes/client-node/package.json" ] || need_js=1
if [ -z "$missing" ] && [ $need_kubectl = 0 ] && [ $need_js = 0 ]; then
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	SUDO=sudo
else
	SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
if [ -n "$missing" ] || [ $need_kubectl = 1 ]; then
	echo "deps: installing:$missing" >&2
	$SUDO apt-get update -qq
fi
if [ -n "$missing" ]; then
	# shellcheck disable=SC2086
	$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
if [ $need_kubectl = 1 ]; then
	# Debian 12 ships the client as kubernetes-client.
	$SUDO apt-get install -y -qq --no-install-recommends kubernetes-client >/dev/null ||
		{ echo "deps: cannot install kubectl (kubernetes-client); the tests need it" >&2; exit 1; }
fi
if [ $need_js = 1 ]; then
	echo "deps: installing @kubernetes/client-node into $JS_DIR" >&2
	(cd "$JS_DIR" && npm install --no-audit --no-fund --loglevel=error >/dev/null)
fi
