#!/bin/sh
# make soak: BIN CYCLES SECONDS (defaults: build/bin, 100 kill -9 cycles under
# batched gang load, then 600 s of mixed load with bounded memory).  What it
# checks is at the top of tests/soak/campaign.py.  SOAK_SEED picks the kill
# moments, SOAK_GROWTH_MB the RSS growth allowed (128).
set -u
BIN=${1:-build/bin}
CYCLES=${2:-100}
SECONDS_MIXED=${3:-600}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/podkernel-soak.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
case "$BIN" in /*) ;; *) BIN="$(pwd)/$BIN" ;; esac
python3 "$SRC/tests/soak/campaign.py" soak "$BIN/podkerneld" "$WORK" "$CYCLES" "$SECONDS_MIXED"
rc=$?
if [ $rc != 0 ]; then
	for f in "$WORK"/*.log; do echo "--- $f (tail)"; tail -n 20 "$f"; done >&2
fi
exit $rc
