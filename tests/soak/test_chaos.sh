#!/bin/sh
# The chaos campaign, short (make chaos runs the full one): 15 s of attach
# mode with two leader-elected schedulers under kill -9 and SIGSTOP of the
# leader, kill -9 of the stand-in, churn and a foreign scheduler; no pod bound
# twice or moved, no overcommit, no partial gang once calm.
. "$PODKERNEL_SRC/tests/need.sh"
need_tool python3
need_file "$PODKERNEL_BIN/podkerneld"
exec sh "$PODKERNEL_SRC/tests/soak/chaos.sh" "$PODKERNEL_BIN" 15
