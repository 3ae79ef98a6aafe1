#!/bin/sh
# make demo: the best end-to-end path this build has.  Grows with the appliance.
set -eu
BIN=${1:-build/bin}
echo "podkernel demo: simulated cluster from boards/tpu-superslice.yaml"
"$BIN/podctl" board show boards/tpu-superslice.yaml
