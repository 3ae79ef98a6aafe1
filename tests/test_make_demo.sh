#!/bin/sh
# `make demo` installs only what the build needs, and serves until Ctrl-C
# unless DEMO_KEEP=0.  On a machine with nothing installed (dpkg-query, apt-get
# and sudo stand-ins on PATH that record what they are asked), `.ci/deps.sh
# build` installs the compiler, pkg-config and the libraries, and none of the
# test tools (no Chromium, clang, valgrind, Node.js or kubectl), while plain
# `.ci/deps.sh` (make deps, make check) installs those too.  `make -n` shows
# the demo target calling the build-only list, with PODKERNEL_DEMO_KEEP from
# DEMO_KEEP (1 by default).  tests/e2e/test_demo.sh runs the demo itself.
set -u
: "${PODKERNEL_SRC:?}"
. "$PODKERNEL_SRC/tests/need.sh"
need_tool make sh
WORK=$(mktemp -d "${TMPDIR:-/tmp}/podkernel-demo-deps.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT
fail=0
mkdir -p "$WORK/bin"
# nothing installed; apt-get and npm record their arguments
cat > "$WORK/bin/dpkg-query" <<'EOF'
#!/bin/sh
exit 1
EOF
cat > "$WORK/bin/apt-get" <<'EOF'
#!/bin/sh
echo "apt-get $*" >> "$LOG"
EOF
cat > "$WORK/bin/sudo" <<'EOF'
#!/bin/sh
exec "$@"
EOF
# npm's stand-in only where a build-only run would betray itself by calling
# it: the full run must find no npm, so that it asks apt-get for one
mkdir -p "$WORK/npmbin"
sed 's/apt-get \$\*/npm $*/' "$WORK/bin/apt-get" > "$WORK/npmbin/npm"
chmod +x "$WORK/bin/"* "$WORK/npmbin/npm"
# a PATH without node, npm or kubectl of the machine: only the stand-ins and
# the basic tools deps.sh uses
for t in sh id grep cat dirname; do ln -s "$(command -v $t)" "$WORK/bin/$t"; done

run_deps() {
	path=$1
	shift
	: > "$WORK/log"
	LOG="$WORK/log" PATH="$path" sh "$PODKERNEL_SRC/.ci/deps.sh" "$@" > /dev/null 2>&1
	tr ' ' '\n' < "$WORK/log"
}
build=$(run_deps "$WORK/bin:$WORK/npmbin" build)
full=$(run_deps "$WORK/bin")
for p in build-essential pkg-config libyaml-dev libjansson-dev libhwloc-dev libmicrohttpd-dev \
	libsqlite3-dev libprotobuf-c-dev protobuf-c-compiler; do
	echo "$build" | grep -qx "$p" || { echo "FAIL: deps.sh build does not install $p"; fail=1; }
done
for p in chromium clang valgrind nodejs npm kubernetes-client check umockdev python3-kubernetes; do
	echo "$build" | grep -qx "$p" && { echo "FAIL: deps.sh build installs $p, which the demo does not need"; fail=1; }
	echo "$full" | grep -qx "$p" || { echo "FAIL: deps.sh (make deps) does not install $p"; fail=1; }
done
echo "$build" | grep -qx install && echo "$build" | grep -q '^npm' &&
	{ echo "FAIL: deps.sh build installs npm packages"; fail=1; }

cd "$PODKERNEL_SRC" || exit 1
make -n demo 2> /dev/null | grep -q 'sh .ci/deps.sh build$' ||
	{ echo "FAIL: make demo does not install the build's packages only"; fail=1; }
make -n demo 2> /dev/null | grep -q 'sh .ci/deps.sh$' &&
	{ echo "FAIL: make demo installs every test dependency"; fail=1; }
make -n demo 2> /dev/null | grep -q 'PODKERNEL_DEMO_KEEP=1 sh examples/demo.sh' ||
	{ echo "FAIL: make demo does not keep serving by default"; fail=1; }
make -n demo DEMO_KEEP=0 2> /dev/null | grep -q 'PODKERNEL_DEMO_KEEP=0 sh examples/demo.sh' ||
	{ echo "FAIL: make demo DEMO_KEEP=0 does not stop at the end"; fail=1; }
[ $fail = 0 ] && echo "ok: make demo installs the build's packages only and keeps serving unless DEMO_KEEP=0"
exit $fail
