#!/bin/sh
# make install / make uninstall, used as an operator would: install into a
# DESTDIR, render every man page with man -l (no warnings, no @PLACEHOLDER@
# left), compile and link a small program against the installed
# libpodkernel-topology through pkg-config (staged and relocated), run it on an installed board file, run the installed
# programs, check the systemd units with systemd-analyze verify (from an
# install under a real PREFIX) and rate their sandboxing with
# systemd-analyze security, then uninstall and find nothing left.
set -eu
: "${PODKERNEL_BUILD:?}" "${PODKERNEL_SRC:?}"
. "$PODKERNEL_SRC/tests/need.sh"
need_tool make man pkg-config cc systemd-analyze
WORK=$(mktemp -d "${TMPDIR:-/tmp}/podkernel-install.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# The build under test (the sanitizer build of make check, or a plain one).
SANFLAGS=""
MK="BUILD=$PODKERNEL_BUILD"
if ldd "$PODKERNEL_SRC/$PODKERNEL_BUILD/bin/podctl" 2>/dev/null | grep -q libasan; then
	SANFLAGS="-fsanitize=address,undefined"
	MK="$MK SAN=1 OPT=-O1"
fi
D="$WORK/root"
# shellcheck disable=SC2086 # MK holds several make variables
make -s -C "$PODKERNEL_SRC" $MK DESTDIR="$D" install > "$WORK/install.log" 2>&1 ||
	{ cat "$WORK/install.log"; fail "make install"; }
P="$D/usr/local"
for f in bin/podctl sbin/podkerneld sbin/podagent lib/libpodkernel-topology.a \
	include/podkernel/topology.h lib/pkgconfig/podkernel-topology.pc \
	share/man/man1/podctl.1 share/man/man8/podkerneld.8 share/man/man8/podagent.8 \
	share/man/man5/podkernel-board.5 lib/systemd/system/podagent.service \
	lib/systemd/system/podkerneld.service share/podkernel/boards/tpu-superslice.yaml \
	share/podkernel/boards/gpu-cluster.yaml share/doc/podkernel/README.md \
	share/doc/podkernel/docs/walkthrough.md share/doc/podkernel/docs/placement-map.png; do
	[ -f "$P/$f" ] || fail "not installed: $f"
done
[ -x "$P/sbin/podagent" ] || fail "podagent not executable"

# Man pages: man -l renders each, without warnings, with its name and sections.
for m in man1/podctl.1 man8/podkerneld.8 man8/podagent.8 man5/podkernel-board.5; do
	MANWIDTH=80 man --warnings -l "$P/share/man/$m" > "$WORK/man.out" 2> "$WORK/man.err" ||
		fail "man -l $m"
	[ -s "$WORK/man.err" ] && { cat "$WORK/man.err"; fail "man -l $m warns"; }
	name=$(basename "$m" | sed 's/\.[0-9]$//')
	grep -q "^NAME" "$WORK/man.out" || fail "$m has no NAME section"
	grep -q "^SEE ALSO" "$WORK/man.out" || fail "$m has no SEE ALSO section"
	grep -q "$name" "$WORK/man.out" || fail "$m does not name $name"
	grep -q "0\.1\.0\|[0-9]\.[0-9]" "$WORK/man.out" || fail "$m has no version"
done
grep -rl '@[A-Z]\+@' "$P/share/man" "$P/lib/systemd" "$P/lib/pkgconfig" && fail "placeholders left in installed files"
grep -q "/usr/local/share/podkernel/boards" "$P/share/man/man1/podctl.1" || fail "podctl(1) paths"

# libpodkernel-topology through pkg-config, from the DESTDIR as it is (a
# packager's staging tree): the .pc file finds its prefix from where it lies.
cat > "$WORK/use_topo.c" <<'EOF'
#include <stdio.h>
#include <topology.h>

int main(int argc, char **argv)
{
	char err[TOPO_ERR_MAX], why[256];
	struct topo_board *b = topo_board_new();
	int64_t milli;

	if (argc != 2 || !b || topo_board_load_file(b, argv[1], err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", b ? err : "no memory");
		return 1;
	}
	if (!topo_label_key_valid("topology.podkernel.dev/cube", why, sizeof(why)) ||
	    topo_label_key_valid("-bad-", why, sizeof(why)) || topo_quantity_parse("1500m", &milli) < 0)
		return 1;
	printf("%s %lld hosts %lld milli\n", topo_board_name(b),
	       (long long)topo_board_host_count(b, 0), (long long)milli);
	topo_board_free(b);
	return 0;
}
EOF
export PKG_CONFIG_PATH="$P/lib/pkgconfig"
[ "$(pkg-config --modversion podkernel-topology)" = 0.1.0 ] || fail "pkg-config version"
[ "$(cd "$(pkg-config --variable=boardsdir podkernel-topology)" && pwd -P)" = "$(cd "$P/share/podkernel/boards" && pwd -P)" ] ||
	fail "pkg-config boardsdir: $(pkg-config --variable=boardsdir podkernel-topology)"
grep -q -- "-lpodkernel-topology" "$P/lib/pkgconfig/podkernel-topology.pc" || fail "the library is not named for the project"
# shellcheck disable=SC2046
cc -std=gnu11 -Wall -Werror $SANFLAGS -o "$WORK/use_topo" "$WORK/use_topo.c" \
	$(pkg-config --cflags --libs podkernel-topology) 2> "$WORK/cc.err" ||
	{ cat "$WORK/cc.err"; fail "a program does not build against the installed libtopo"; }
"$WORK/use_topo" "$P/share/podkernel/boards/tpu-superslice.yaml" > "$WORK/use.out" ||
	fail "the program linked against libtopo failed"
[ "$(cat "$WORK/use.out")" = "tpu-superslice 512 hosts 1500 milli" ] ||
	fail "libtopo program said: $(cat "$WORK/use.out")"
# A relocated tree (the staged prefix moved elsewhere) builds as well.
mkdir -p "$WORK/moved"
cp -a "$P" "$WORK/moved/opt"
# shellcheck disable=SC2046
PKG_CONFIG_PATH="$WORK/moved/opt/lib/pkgconfig" cc -std=gnu11 -Wall -Werror $SANFLAGS \
	-o "$WORK/use_topo2" "$WORK/use_topo.c" \
	$(PKG_CONFIG_PATH="$WORK/moved/opt/lib/pkgconfig" pkg-config --cflags --libs podkernel-topology) ||
	fail "a relocated install does not build"
rm -rf "$WORK/moved"
unset PKG_CONFIG_PATH

# The installed programs run.
[ "$("$P/bin/podctl" --version)" = "podctl 0.1.0" ] || fail "podctl --version"
[ "$("$P/sbin/podkerneld" --version)" = "podkerneld 0.1.0" ] || fail "podkerneld --version"
[ "$("$P/sbin/podagent" --version)" = "podagent 0.1.0" ] || fail "podagent --version"
"$P/bin/podctl" board check "$P/share/podkernel/boards/"*.yaml > /dev/null || fail "installed boards"
grep -q "^ExecStart=/usr/local/sbin/podagent " "$P/lib/systemd/system/podagent.service" ||
	fail "podagent.service runs another path"
grep -q "^ExecStart=/usr/local/sbin/podkerneld " "$P/lib/systemd/system/podkerneld.service" ||
	fail "podkerneld.service runs another path"

# Uninstall leaves nothing behind.
# shellcheck disable=SC2086
make -s -C "$PODKERNEL_SRC" $MK DESTDIR="$D" uninstall > "$WORK/uninstall.log" 2>&1 ||
	{ cat "$WORK/uninstall.log"; fail "make uninstall"; }
left=$(find "$D" -type f)
[ -z "$left" ] || fail "left after uninstall: $left"

# The units pass systemd-analyze verify where their programs really are.
R="$WORK/prefix"
# shellcheck disable=SC2086
make -s -C "$PODKERNEL_SRC" $MK PREFIX="$R" install > "$WORK/install2.log" 2>&1 ||
	{ cat "$WORK/install2.log"; fail "make install PREFIX=..."; }
MANPATH="$R/share/man" systemd-analyze verify "$R/lib/systemd/system/podagent.service" \
	"$R/lib/systemd/system/podkerneld.service" > "$WORK/verify.log" 2>&1 ||
	{ cat "$WORK/verify.log"; fail "systemd-analyze verify"; }
# ... and are sandboxed: systemd-analyze security rates each 4.0 or better.
for u in podagent podkerneld; do
	systemd-analyze security --offline=true --threshold=40 "$R/lib/systemd/system/$u.service" \
		> "$WORK/security.log" 2>&1 ||
		{ cat "$WORK/security.log"; fail "$u.service is rated over 4.0 by systemd-analyze security"; }
	tail -1 "$WORK/security.log"
done
# shellcheck disable=SC2086
make -s -C "$PODKERNEL_SRC" $MK PREFIX="$R" uninstall > /dev/null 2>&1 || fail "uninstall PREFIX"
[ -z "$(find "$R" -type f)" ] || fail "left after uninstall: $(find "$R" -type f)"
echo "ok"
