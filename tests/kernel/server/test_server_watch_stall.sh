#!/bin/sh
# A watch whose client stops reading while more is pending than the sockets
# hold (twelve 1.4 MB pods, more than loopback socket buffers take) is closed after 20 s without progress, as
# kube-apiserver closes a watcher that falls behind; the client relists.  A
# watch that is read stays open past that, kept alive by its heartbeats.
. "$PODKERNEL_SRC/tests/kernel/server/lib.sh"
need curl
need python3
H="python3 $PODKERNEL_SRC/tests/kernel/server/hostile.py"
cat >"$WORK/tokens" <<'T'
admintok,admin,1,"system:masters"
T
pk_start "$WORK/data" --token-auth-file "$WORK/tokens"
PK_URL="http://127.0.0.1:$PK_PORT"
A="Authorization: Bearer admintok"
J="Content-Type: application/json"
python3 - "$WORK" <<'PY'
import json, sys
for i in range(12):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "big%d" % i},
           "spec": {"containers": [{"name": "c", "image": "busybox", "args": ["x" * 100000] * 14}]}}
    open("%s/big%d.json" % (sys.argv[1], i), "w").write(json.dumps(pod))
PY
for i in 0 1 2 3 4 5 6 7 8 9 10 11; do
	expect 201 POST /api/v1/namespaces/default/pods -H "$A" -H "$J" --data-binary @"$WORK/big$i.json"
done
# A reader that keeps reading an idle watch (bookmarks every 15 s) meanwhile.
curl -s -m 23 -o "$WORK/live" -H "$A" \
	"$PK_URL/api/v1/namespaces/default/pods?watch=1&allowWatchBookmarks=true&resourceVersion=$(
		code GET /api/v1/namespaces/default/pods -H "$A" >/dev/null; rv_of "$WORK/body")" &
live=$!
$H "$PK_PORT" "$PK_PID" stalled-watch "/api/v1/namespaces/default/pods?watch=1" 23 ||
	fail "stalled watch"
wait $live
rc=$?
[ $rc = 28 ] || fail "an idle watch being read ended after less than 23 s (curl $rc)"
grep -q BOOKMARK "$WORK/live" || fail "no heartbeat on the idle watch"
pk_stop
echo "test_server_watch_stall: ok"
