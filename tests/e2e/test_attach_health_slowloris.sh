#!/bin/sh
# Attach mode's health port against slowloris: 70 sockets from one address
# trickle header bytes (reopened as soon as they are closed) while the
# liveness probe asks /healthz twice a second.  The health port is served by
# the API server's listener: its per-address cap makes the oldest trickler
# give way, its header deadline closes the rest, and every probe is answered.
set -eu
. "$PODKERNEL_SRC/tests/e2e/lib.sh"
. "$PODKERNEL_SRC/tests/e2e/attach_lib.sh"
need_python

e2e_setup
attach_cluster_start
attach_start a --request-header-timeout 2
HP=$ATTACH_PORT_a
wait_for 20 curl -sf "http://127.0.0.1:$HP/healthz" || { attach_dump; fail "no /healthz"; }
PK_LEGIT_PATH=/healthz python3 "$PODKERNEL_SRC/tests/kernel/server/hostile.py" "$HP" \
	"$ATTACH_PID_a" slowloris 70 1 6 2 || { attach_dump; fail "health slowloris"; }
curl -sf "http://127.0.0.1:$HP/metrics" >"$WORK/metrics" || fail "no /metrics"
grep -q 'podkernel_listener_closed_total{listener="health",reason="displaced"} [1-9]' "$WORK/metrics" ||
	fail "the health listener displaced nothing: $(grep pk_listener "$WORK/metrics")"
echo "PASS: attach health port under slowloris"
