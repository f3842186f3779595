#!/usr/bin/env bash
# Sets up and builds mscclc, then runs the main job on a bundled example:
#   1. compile it and print the checked, optimised MLIR (rank 0),
#   2. simulate it on the CPU (adversarial schedules, several sizes) and
#      print the verdict and estimated times,
#   3. where a GPU is present, run it through the JIT API with the same rank
#      count (several ranks per GPU where there are fewer GPUs than ranks)
#      and check the result.
set -euo pipefail
cd "$(dirname "$0")/.."
EXAMPLE="${1:-stdlib/allreduce_2pa_hb.mscl}"
RANKS="${MSCCLC_RANKS:-8}"
scripts/setup.sh
# A prebuilt compiler (MSCCLC_COMPILER, see setup.sh) or the one just built.
MSCCLC="${MSCCLC_COMPILER:-build/bin/mscclc}"

echo "== mscclc $EXAMPLE --ranks $RANKS --emit=mlir (checked; rank 0 shown)"
"$MSCCLC" "$EXAMPLE" --ranks "$RANKS" --emit=mlir > build/main-job.mlir
grep -m1 -A4 "mscl.program" build/main-job.mlir
echo "    ..."
awk '/mscl.rank 0 /{p=1} /mscl.rank 1 /{exit} p' build/main-job.mlir
echo "   ... the whole program: build/main-job.mlir ($(wc -l < build/main-job.mlir) lines)"

echo "== mscclc --simulate $EXAMPLE --ranks $RANKS"
"$MSCCLC" --simulate "$EXAMPLE" --ranks "$RANKS" --schedules 20

gpus=0
if command -v nvidia-smi >/dev/null 2>&1; then
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
fi
if [ "$gpus" -ge 1 ] && [ -x build/bin/allreduce_host ]; then
  echo "== running $RANKS ranks on $gpus GPU(s) (multicast disabled)"
  MSCCLC_DISABLE_MULTICAST=1 NCCL_NVLS_ENABLE=0 MSCCLC_COMPILER="$MSCCLC" \
    build/bin/allreduce_host --nranks "$RANKS" "$EXAMPLE" 1000003
else
  echo "== no GPUs here (found $gpus): the simulator above is the run"
fi
