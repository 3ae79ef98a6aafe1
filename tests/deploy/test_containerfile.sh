#!/bin/sh
# The Containerfile builds what the programs need and ships what they link:
# its build stage installs the -dev package behind every pkg-config module
# of the Makefile, its runtime stage the package of every shared library the
# built programs link directly (readelf NEEDED, resolved with ldconfig and
# dpkg), and each image target runs its program from the installed path.
# (No container engine runs here; this keeps the recipe true to the build.)
set -eu
: "${PODKERNEL_SRC:?}" "${PODKERNEL_BIN:?}"
. "$PODKERNEL_SRC/tests/need.sh"
need_tool readelf ldconfig dpkg pkg-config
cd "$PODKERNEL_SRC"
CF=Containerfile
fail=0
# The apt-get install packages of stage NAME (continuation lines joined).
stage_pkgs() {
	awk -v st="$1" '
		/^FROM / { cur = ($NF == st) }
		cur { line = line " " $0; if ($0 !~ /\\$/) { print line; line = "" } }' "$CF" |
		grep 'apt-get install' | sed 's/.*--no-install-recommends//; s/&&.*//; s/\\//g' |
		tr ' ' '\n' | grep -v '^$' | sort -u
}
T=$(mktemp -d "${TMPDIR:-/tmp}/podkernel-containerfile.XXXXXX")
trap 'rm -rf "$T"' EXIT
stage_pkgs build > "$T/build"
stage_pkgs runtime > "$T/runtime"
[ -s "$T/build" ] && [ -s "$T/runtime" ] || { echo "FAIL: no apt-get install in the stages"; exit 1; }

mods=0
for m in $(awk '/^PKGS *:=/ { f = 1; sub(/^PKGS *:= */, "") }
	f { c = /\\$/; gsub(/\\/, ""); print; if (!c) f = 0 }' Makefile); do
	mods=$((mods + 1))
	pc="$(pkg-config --variable=pcfiledir "$m")/$m.pc"
	pkg=$(dpkg -S "$pc" 2>/dev/null | head -1 | cut -d: -f1)
	[ -n "$pkg" ] || { echo "FAIL: no package owns $pc"; fail=1; continue; }
	grep -qx "$pkg" "$T/build" || { echo "FAIL: build stage lacks $pkg ($m)"; fail=1; }
done
[ "$mods" -ge 10 ] || { echo "FAIL: read $mods pkg-config modules from the Makefile"; fail=1; }

for b in podctl podkerneld podagent; do
	for lib in $(readelf -d "$PODKERNEL_BIN/$b" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		case $lib in
		libasan.so.* | libubsan.so.* | libc.so.* | libm.so.* | libpthread.so.* | ld-linux*) continue ;;
		esac
		path=$(ldconfig -p | awk -v l="$lib" '$1 == l && /x86-64/ { print $NF; exit }')
		pkg=$(dpkg -S "$path" 2>/dev/null || dpkg -S "$(readlink -f "$path")" 2>/dev/null ||
			dpkg -S "/usr$path" 2>/dev/null || true)
		pkg=$(echo "$pkg" | head -1 | cut -d: -f1)
		[ -n "$pkg" ] || { echo "FAIL: no package owns $lib ($path)"; fail=1; continue; }
		grep -qx "$pkg" "$T/runtime" || { echo "FAIL: runtime stage lacks $pkg ($lib of $b)"; fail=1; }
	done
done

# Each target runs its program from where make install PREFIX=/usr puts it.
grep -q '^FROM runtime AS podagent$' "$CF" || { echo "FAIL: no podagent target"; fail=1; }
grep -q '^FROM runtime AS podkerneld$' "$CF" || { echo "FAIL: no podkerneld target"; fail=1; }
grep -q 'ENTRYPOINT \["/usr/sbin/podagent"\]' "$CF" || { echo "FAIL: podagent entrypoint"; fail=1; }
grep -q 'ENTRYPOINT \["/usr/sbin/podkerneld"\]' "$CF" || { echo "FAIL: podkerneld entrypoint"; fail=1; }
grep -q 'make PREFIX=/usr DESTDIR=/out install' "$CF" || { echo "FAIL: not installed with make install"; fail=1; }
grep -q '^USER 65534' "$CF" || { echo "FAIL: images run as root"; fail=1; }
grep -qx 'build/' .containerignore || { echo "FAIL: .containerignore does not leave out build/"; fail=1; }
# The deploy bases use the images this file builds.
grep -q 'image: podkernel/podagent:' deploy/agent/daemonset.yaml || fail=1
grep -q 'image: podkernel/podkerneld:' deploy/standalone/deployment.yaml || fail=1
[ $fail = 0 ] && echo "ok"
exit $fail
