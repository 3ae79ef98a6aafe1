#!/bin/sh
# make chaos: BIN SECONDS (defaults: build/bin, 600 s).  Attach mode with two
# leader-elected schedulers on a stand-in cluster under kill -9 and SIGSTOP
# of the leader, kill -9 of the stand-in, churn and a foreign scheduler,
# checked against cluster-wide invariants (tests/soak/campaign.py says
# which).  CHAOS_SEED picks the actions.
set -u
BIN=${1:-build/bin}
SECS=${2:-600}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/podkernel-chaos.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
case "$BIN" in /*) ;; *) BIN="$(pwd)/$BIN" ;; esac
python3 "$SRC/tests/soak/campaign.py" chaos "$BIN/podkerneld" "$WORK" "$SECS"
rc=$?
if [ $rc != 0 ]; then
	for f in "$WORK"/*.log; do echo "--- $f (tail)"; tail -n 20 "$f"; done >&2
fi
exit $rc
