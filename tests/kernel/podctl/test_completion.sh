#!/bin/sh
# podctl completion bash|zsh: the script, sourced into a real bash, completes
# the commands, board subcommands, every served kind (plural and short
# names, from the kinds table), -o formats and strategies; the zsh form runs
# the same function through bashcompinit; anything else is exit 2.
set -eu
: "${PODKERNEL_BIN:?}" "${PODKERNEL_SRC:?}"
. "$PODKERNEL_SRC/tests/need.sh"
need_tool bash
WORK=$(mktemp -d "${TMPDIR:-/tmp}/podkernel-completion.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
P="$PODKERNEL_BIN/podctl"

"$P" completion bash > "$WORK/podctl.bash" || fail "completion bash"
# complete WORDS...: what the function offers for the last word
complete_words() {
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _podctl; echo "${COMPREPLY[*]}"' \
		_ "$WORK/podctl.bash" "$@"
}
[ "$(complete_words podctl ge)" = get ] || fail "podctl ge -> $(complete_words podctl ge)"
[ "$(complete_words podctl --server http://x:1 sim)" = simulate ] || fail "command after a global option"
[ "$(complete_words podctl board oc)" = occupancy ] || fail "board subcommands"
for k in pods po nodes no podgroups pg compositepodgroups jobs jobsets priorityclasses; do
	complete_words podctl get "" | tr ' ' '\n' | grep -qx "$k" || fail "get does not complete $k"
done
[ "$(complete_words podctl describe podg)" = podgroups ] || fail "describe kinds"
[ "$(complete_words podctl get pods -o y)" = yaml ] || fail "-o formats"
[ "$(complete_words podctl get pods -o j)" = "json jsonpath=" ] || fail "-o j -> $(complete_words podctl get pods -o j)"
[ "$(complete_words podctl get pods -o cu)" = "custom-columns=" ] || fail "-o custom-columns"
# get's kinds separated by commas: the last one is completed
[ "$(complete_words podctl get pods,podg)" = "pods,podgroups" ] || fail "pods,podg -> $(complete_words podctl get pods,podg)"
[ "$(complete_words podctl simulate --strategy k)" = kep ] || fail "strategies"
[ "$(complete_words podctl completion z)" = zsh ] || fail "completion shells"

"$P" completion zsh > "$WORK/podctl.zsh" || fail "completion zsh"
grep -q '^#compdef podctl' "$WORK/podctl.zsh" || fail "zsh: no #compdef"
grep -q 'bashcompinit' "$WORK/podctl.zsh" || fail "zsh: no bashcompinit"
grep -q '^complete -o default -F _podctl podctl' "$WORK/podctl.zsh" || fail "zsh: no complete"
bash -n "$WORK/podctl.bash" || fail "the bash script does not parse"

rc=0
"$P" completion fish > /dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "completion fish: exit $rc, expected 2"
echo "test_completion: bash and zsh scripts complete commands, kinds and options"
