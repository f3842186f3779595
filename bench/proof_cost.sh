#!/usr/bin/env bash
# The cost of the static proof and translation validation, before and after
# a change, in one sitting: `--emit=mlir` (frontend, passes, proofs) of
# every stdlib file at 8 ranks and of allreduce_2pa_hb at 64 and 256 ranks,
# each run REPS times by each compiler in turn (A B A B ...), and a
# Markdown table of the median wall time and the median peak memory
# (/usr/bin/time). Run it on an idle machine.
#
#   bench/proof_cost.sh BEFORE_MSCCLC AFTER_MSCCLC
# Environment: REPS (default 5).
# Targets (docs/verification.md, "Cost"): 8 ranks under 15 ms for every
# stdlib file, 64 ranks under 0.5 s, 256 ranks at most 5 s and 1 GB.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 2 ] || { sed -n 2,12p "$0"; exit 2; }
before=$1 after=$2
REPS=${REPS:-5}
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (Debian: time)" >&2; exit 1; }

# Runs each compiler REPS times in turn on "$@"; prints, per compiler, the
# median wall milliseconds (of /usr/bin/time running it: about 1 ms more
# than the compiler alone) and the median peak resident MiB.
measure() {
  local wall_a=() wall_b=() rss_a=() rss_b=() out
  for _ in $(seq "$REPS"); do
    for which in a b; do
      local bin=$before
      [ $which = b ] && bin=$after
      local t0 t1 kib
      t0=$(date +%s%N)
      kib=$( { /usr/bin/time -f '%M' "$bin" "$@" --emit=mlir -o /dev/null \
               2>/dev/null >/dev/null; } 2>&1 | tail -1)
      t1=$(date +%s%N)
      eval "wall_$which+=($(( (t1 - t0) / 1000000 )))"
      eval "rss_$which+=($((kib / 1024)))"
    done
  done
  med() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
  echo "$(med "${wall_a[@]}") $(med "${rss_a[@]}") $(med "${wall_b[@]}") $(med "${rss_b[@]}")"
}

echo "--emit=mlir, median of $REPS runs each, in turn; $(nproc) cores,"\
     "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo
echo "| program | ranks | before ms | before MiB | after ms | after MiB |"
echo "|---|---|---|---|---|---|"
for file in $(ls stdlib/*.mscl | grep -v '/common.mscl$'); do
  read -r wa ra wb rb <<<"$(measure "$file" --ranks 8)"
  echo "| $(basename "$file" .mscl) | 8 | $wa | $ra | $wb | $rb |"
done
for ranks in 64 256; do
  read -r wa ra wb rb <<<"$(measure stdlib/allreduce_2pa_hb.mscl --ranks $ranks)"
  echo "| allreduce_2pa_hb | $ranks | $wa | $ra | $wb | $rb |"
done
