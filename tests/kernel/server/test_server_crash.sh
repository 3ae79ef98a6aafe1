#!/bin/sh
# Durability: four writers create objects (PriorityClasses: nothing else in
# podkerneld writes them, so their resourceVersions stay put) as fast as they can and
# log every acknowledged write (name and resourceVersion); podkerneld is
# killed with SIGKILL in the middle of the burst and restarted on the same
# data.  Every acknowledged write must be there with the same
# resourceVersion, and new writes continue above it.
. "$PODKERNEL_SRC/tests/kernel/server/lib.sh"
need curl

pk_start "$WORK/data"
PK_URL="http://127.0.0.1:$PK_PORT"
J="Content-Type: application/json"
PC=/apis/scheduling.k8s.io/v1/priorityclasses

writer() {
	w=$1
	i=0
	while :; do
		i=$((i + 1))
		body="{\"apiVersion\":\"scheduling.k8s.io/v1\",\"kind\":\"PriorityClass\",\"metadata\":{\"name\":\"w$w-$i\"},\"value\":$i}"
		out=$(curl -s --max-time 5 -w ' %{http_code}' -X POST -H "$J" -d "$body" \
			"$PK_URL$PC") || break
		case "$out" in
		*" 201") echo "w$w-$i $(echo "$out" | grep -o '"resourceVersion":"[0-9]*"' | tr -dc 0-9)" ;;
		*) break ;;
		esac
	done >"$WORK/acked.$w"
}
for w in 1 2 3 4; do writer $w & done
sleep 1.5
kill -9 "$PK_PID"
wait 2>/dev/null
cat "$WORK"/acked.* >"$WORK/acked"
n=$(wc -l <"$WORK/acked")
[ "$n" -gt 10 ] || fail "only $n acknowledged writes before the kill"

pk_start "$WORK/data"
PK_URL="http://127.0.0.1:$PK_PORT"
curl -s "$PK_URL$PC" >"$WORK/list"
max=0
while read -r name rv; do
	grep -q "\"name\":\"$name\",\"uid\":\"[^\"]*\",\"creationTimestamp\":\"[^\"]*\",\"generation\":1,\"resourceVersion\":\"$rv\"" \
		"$WORK/list" || fail "acknowledged $name@$rv lost or changed after kill -9"
	[ "$rv" -gt "$max" ] && max=$rv
done <"$WORK/acked"
expect 201 POST $PC -H "$J" \
	-d '{"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"after"},"value":1}'
[ "$(rv_of "$WORK/body")" -gt "$max" ] || fail "resourceVersion went backwards after restart"
pk_stop
echo "test_server_crash: ok ($n acknowledged writes survived kill -9)"
