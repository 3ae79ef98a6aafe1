#!/bin/sh
# The same calls against podkerneld --no-scheduling, the stand-in cluster
# attach mode talks to (see semantics_lib.sh).
MODE=stand-in
. "$PODKERNEL_SRC/tests/clients/semantics_lib.sh"
echo "test_kubectl_semantics_stand_in: ok"
