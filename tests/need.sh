# Test prerequisites, sourced by the test scripts (not run).
#
# `make deps` installs every tool the tests use (.ci/deps.sh), so a missing
# tool is a failure, not a skip: need_tool prints what is missing and exits 1.
# Only a capability the machine itself lacks (no network namespaces without
# CAP_NET_ADMIN, for instance) may skip a test, and then visibly: skip prints
# "SKIP: <script>: REASON" and exits 77, which tests/run-tests.sh counts as
# skipped only together with that line.

# need_tool NAME...: every NAME is a command on PATH, else exit 1
need_tool() {
	for _t in "$@"; do
		command -v "$_t" > /dev/null 2>&1 && continue
		echo "FAIL: $(basename "$0"): $_t is not installed (make deps installs it)" >&2
		exit 1
	done
}

# need_file PATH...: every PATH exists (a program of the build, a fixture), else exit 1
need_file() {
	for _f in "$@"; do
		[ -e "$_f" ] && continue
		echo "FAIL: $(basename "$0"): $_f is missing" >&2
		exit 1
	done
}

# skip REASON: the machine lacks a capability the test needs
skip() {
	echo "SKIP: $(basename "$0"): $*" >&2
	exit 77
}
