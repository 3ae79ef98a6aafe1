#!/bin/sh
# kube-apiserver semantics with the real clients against a standalone
# podkerneld (see semantics_lib.sh).
MODE=standalone
. "$PODKERNEL_SRC/tests/clients/semantics_lib.sh"
echo "test_kubectl_semantics: ok"
