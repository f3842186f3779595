#!/usr/bin/env bash
# Times mscclc on .mscl programs, one stage and one output at a time, and
# prints a Markdown table of medians (wall time of the whole process, output
# to /dev/null):
#   frontend    --emit=mlir --no-passes         (frontend + MLIRGen)
#   passes      --emit=mlir --skip-static-checks (+ optimisation passes)
#   proofs      --emit=mlir                      (+ the static proofs)
#   cuda, plan, dot, bundle: the default pipeline, then that output
# and, last, the largest output time over the proofs column (emission must
# stay linear: within 3x of --emit=mlir).
#
#   bench/compile_time.sh [FILE.mscl ...]
# Environment: RANKS (default "8 64"), INSTANCES (default "4 32"), REPS
# (default 3), MSCCLC (default build/bin/mscclc). A shape the program
# refuses (its `require`, a limit) is listed with the compiler's reason.
set -euo pipefail
shopt -s inherit_errexit # a failed run inside $(...) stops the script
cd "$(dirname "$0")/.."
MSCCLC="${MSCCLC:-build/bin/mscclc}"
REPS="${REPS:-3}"
read -r -a RANK_LIST <<<"${RANKS:-8 64}"
read -r -a INSTANCE_LIST <<<"${INSTANCES:-4 32}"
if (($# == 0)); then
  set -- $(ls stdlib/*.mscl | grep -v '/common.mscl$')
fi

median_ms() { # runs "$@" REPS times, prints the median wall time in ms
  local times=()
  for _ in $(seq "$REPS"); do
    local t0 t1
    t0=$(date +%s%N)
    "$@" >/dev/null
    t1=$(date +%s%N)
    times+=($(((t1 - t0) / 1000)))
  done
  printf '%s\n' "${times[@]}" | sort -n |
    awk '{a[NR]=$1} END {printf "%.0f", a[int((NR+1)/2)]/1000}'
}

echo "mscclc compile time, median of $REPS runs, ms"
echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo
echo "| program | ranks | instances | frontend | passes | proofs | cuda | plan | dot | bundle | max output / proofs |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for file in "$@"; do
  name=$(basename "$file" .mscl)
  for ranks in "${RANK_LIST[@]}"; do
    for inst in "${INSTANCE_LIST[@]}"; do
      shape=("$MSCCLC" "$file" --ranks "$ranks" --instances "$inst")
      if ! reason=$("${shape[@]}" --emit=mlir --no-passes 2>&1 >/dev/null); then
        reason=$(echo "$reason" | grep -m1 'error:' | sed 's/.*error: //')
        echo "| $name | $ranks | $inst | refused: ${reason:-no diagnostic} |||||||"
        continue
      fi
      front=$(median_ms "${shape[@]}" --emit=mlir --no-passes)
      passes=$(median_ms "${shape[@]}" --emit=mlir --skip-static-checks)
      proofs=$(median_ms "${shape[@]}" --emit=mlir)
      row="| $name | $ranks | $inst | $front | $passes | $proofs"
      worst=0
      for emit in cuda plan dot bundle; do
        t=$(median_ms "${shape[@]}" --emit=$emit)
        row+=" | $t"
        ((t > worst)) && worst=$t
      done
      ratio=$(awk -v a="$worst" -v b="$proofs" 'BEGIN {printf "%.2f", a / (b > 0 ? b : 1)}')
      echo "$row | $ratio |"
    done
  done
done
