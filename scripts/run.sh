#!/usr/bin/env bash
# Sets up and builds mscclc, then runs the main job on a bundled example:
# compile it and print the checked MLIR.
set -euo pipefail
cd "$(dirname "$0")/.."
EXAMPLE="${1:-examples/allreduce_2pa_hb.mscl}"
RANKS="${MSCCLC_RANKS:-8}"
scripts/setup.sh
echo "== mscclc $EXAMPLE --ranks $RANKS --emit=mlir"
build/bin/mscclc "$EXAMPLE" --ranks "$RANKS" --emit=mlir
