#!/bin/sh
# Durability: four concurrent writers create objects (PriorityClasses, which
# nothing else in podkerneld writes, so their resourceVersions stay put) as
# fast as they can and log every acknowledged write (name, resourceVersion).
# podkerneld is killed with SIGKILL in the middle of the burst, three times at
# different moments, and restarted on the same data: every acknowledged write
# must be there with the same resourceVersion, and new writes go above it.
. "$PODKERNEL_SRC/tests/kernel/server/lib.sh"
need curl

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

# Every acknowledged write so far must be there, unchanged.
verify() {
	curl -s "$PK_URL$PC?limit=10000" >"$WORK/list"
	max=0
	while read -r name rv; do
		grep -q "\"name\":\"$name\",\"uid\":\"[^\"]*\",\"creationTimestamp\":\"[^\"]*\",\"generation\":1,\"resourceVersion\":\"$rv\"" \
			"$WORK/list" || fail "acknowledged $name@$rv lost or changed after kill -9"
		[ "$rv" -gt "$max" ] && max=$rv
	done <"$WORK/acked"
}

# Three rounds: burst, kill -9 at a different moment, restart, verify.
: >"$WORK/acked"
round=0
for delay in 0.4 1.5 0.9; do
	round=$((round + 1))
	pk_start "$WORK/data"
	PK_URL="http://127.0.0.1:$PK_PORT"
	[ $round -gt 1 ] && verify
	for w in 1 2 3 4; do writer "$round$w" & done
	sleep $delay
	kill -9 "$PK_PID"
	wait 2>/dev/null
	cat "$WORK"/acked.* >>"$WORK/acked"
	rm -f "$WORK"/acked.*
done
n=$(wc -l <"$WORK/acked")
[ "$n" -gt 10 ] || fail "only $n acknowledged writes before the kills"

pk_start "$WORK/data"
PK_URL="http://127.0.0.1:$PK_PORT"
verify
expect 201 POST $PC -H "$J" \
	-d '{"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"after"},"value":1}'
[ "$(rv_of "$WORK/body")" -gt "$max" ] || fail "resourceVersion went backwards after restart"
pk_stop
echo "test_server_crash: ok ($n acknowledged writes survived three kill -9)"
