#!/bin/sh
# Install the Debian packages podkernel builds and tests with.  A no-op when
# they are all present.  README.md ("Dependencies") says why each is here.
set -eu
PKGS="build-essential pkg-config clang libclang-rt-14-dev
libyaml-dev libjansson-dev libhwloc-dev hwloc libudev-dev
libnl-3-dev libnl-route-3-dev libnl-genl-3-dev
libmicrohttpd-dev libcurl4-openssl-dev curl libsqlite3-dev sqlite3
check umockdev libumockdev-dev iproute2 openssl valgrind python3 git
chromium man-db groff-base systemd python3-yaml"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
need_kubectl=0
command -v kubectl >/dev/null 2>&1 || need_kubectl=1
if [ -z "$missing" ] && [ $need_kubectl = 0 ]; then
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	SUDO=sudo
else
	SUDO=
fi
echo "deps: installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
if [ -n "$missing" ]; then
	# shellcheck disable=SC2086
	$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
if [ $need_kubectl = 1 ]; then
	# Debian 12 ships the client as kubernetes-client.
	$SUDO apt-get install -y -qq --no-install-recommends kubernetes-client >/dev/null ||
		echo "deps: no kubectl package; kubectl tests will be skipped" >&2
fi
