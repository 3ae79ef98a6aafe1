#!/bin/sh
# Server-side apply from the official JavaScript client (@kubernetes/client-node
# ServerSideApply): create, a removed field, a conflict between managers and
# its force.  See tests/clients/js/ssa_test.mjs.
. "$PODKERNEL_SRC/tests/kernel/server/lib.sh"
need_tool node
JS="$PODKERNEL_SRC/tests/clients/js"
[ -d "$JS/node_modules/@kubernetes/client-node" ] ||
	{ echo "FAIL: @kubernetes/client-node is not installed in $JS (make deps installs it)" >&2; exit 1; }

cat >"$WORK/tokens" <<'T'
admintok,admin,1,"system:masters"
T
for mode in standalone --no-scheduling; do
	if [ "$mode" = standalone ]; then pk_start "$WORK/data-a" --token-auth-file "$WORK/tokens"
	else pk_start "$WORK/data-b" --token-auth-file "$WORK/tokens" --no-scheduling; fi
	(cd "$JS" && timeout 60 node ssa_test.mjs "http://127.0.0.1:$PK_PORT" admintok) ||
		fail "js server-side apply ($mode)"
	pk_stop
done
echo "test_js_ssa: ok"
