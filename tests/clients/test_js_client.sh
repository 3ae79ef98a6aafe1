#!/bin/sh
# podkerneld against the official Kubernetes JavaScript client,
# @kubernetes/client-node 1.x (make deps installs it into
# tests/clients/js/node_modules): VersionApi, list, merge patch, an Informer
# following add/update/delete, CustomObjectsApi.  See tests/clients/js/client_test.mjs.
. "$PODKERNEL_SRC/tests/kernel/server/lib.sh"
. "$PODKERNEL_SRC/tests/need.sh"
need_tool node
JS="$PODKERNEL_SRC/tests/clients/js"
[ -d "$JS/node_modules/@kubernetes/client-node" ] ||
	{ echo "FAIL: @kubernetes/client-node is not installed in $JS (make deps installs it)" >&2; exit 1; }

cat >"$WORK/tokens" <<'T'
admintok,admin,1,"system:masters"
T
pk_start "$WORK/data" --token-auth-file "$WORK/tokens"
(cd "$JS" && timeout 120 node client_test.mjs "http://127.0.0.1:$PK_PORT" admintok) || fail "js client"
pk_stop
echo "test_js_client: ok"
