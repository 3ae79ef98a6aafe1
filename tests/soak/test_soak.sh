#!/bin/sh
# The soak campaign, short (make soak runs the full one): two kill -9 cycles
# under batched gang load (no acknowledged write lost, no overcommit, no
# partial gang after each restart) and 4 s of mixed load with bounded memory.
. "$PODKERNEL_SRC/tests/need.sh"
need_tool python3
need_file "$PODKERNEL_BIN/podkerneld"
exec sh "$PODKERNEL_SRC/tests/soak/soak.sh" "$PODKERNEL_BIN" 2 4
