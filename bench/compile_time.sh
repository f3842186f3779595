#!/usr/bin/env bash
# Times mscclc compiling an .mscl program to MLIR at several rank counts;
# prints the median of REPS runs for: the frontend + MLIRGen alone
# (--no-passes), the default pipeline (optimisation passes), and the
# default pipeline plus the static proofs (--static-checks).
#   bench/compile_time.sh [FILE.mscl] [RANKS...]
set -euo pipefail
cd "$(dirname "$0")/.."
MSCCLC="${MSCCLC:-build/bin/mscclc}"
FILE="${1:-examples/allreduce_2pa_hb.mscl}"
shift || true
RANK_LIST=("${@:-8 64}")
REPS="${REPS:-11}"

median_ms() { # runs "$@" REPS times, prints the median wall time in ms
  local times=()
  for _ in $(seq "$REPS"); do
    local t0 t1
    t0=$(date +%s%N)
    "$@" >/dev/null
    t1=$(date +%s%N)
    times+=($(( (t1 - t0) / 1000 )))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]/1000}'
}

echo "mscclc compile time ($(basename "$FILE"), median of $REPS runs)"
echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
for ranks in ${RANK_LIST[@]}; do
  front=$(median_ms "$MSCCLC" "$FILE" --ranks "$ranks" --emit=mlir --no-passes)
  passes=$(median_ms "$MSCCLC" "$FILE" --ranks "$ranks" --emit=mlir)
  checked=$(median_ms "$MSCCLC" "$FILE" --ranks "$ranks" --emit=mlir --static-checks)
  echo "  --ranks $ranks: frontend+MLIRGen $front ms, + passes $passes ms, + static checks $checked ms"
done
