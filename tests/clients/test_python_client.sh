#!/bin/sh
# podkerneld against a client nobody here wrote: Debian's python3-kubernetes
# (for /usr/bin/python3, installed by make deps).  VersionApi, CoreV1Api with
# dry runs and preconditions, a watch.Watch() stream, paging, CustomObjectsApi
# on the workload kinds.  See tests/clients/python/client_test.py.
. "$PODKERNEL_SRC/tests/kernel/server/lib.sh"
. "$PODKERNEL_SRC/tests/need.sh"
need_tool curl
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "FAIL: $PY is missing (make deps installs python3-kubernetes)" >&2; exit 1; }
"$PY" -c 'import kubernetes' 2>/dev/null ||
	{ echo "FAIL: python3-kubernetes is not installed (make deps installs it)" >&2; exit 1; }

cat >"$WORK/tokens" <<'T'
admintok,admin,1,"system:masters"
viewtok,viewer,2
T
pk_start "$WORK/data" --token-auth-file "$WORK/tokens"
timeout 120 "$PY" "$PODKERNEL_SRC/tests/clients/python/client_test.py" \
	"http://127.0.0.1:$PK_PORT" admintok viewtok || fail "python client"
pk_stop
echo "test_python_client: ok"
