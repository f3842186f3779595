#!/usr/bin/env bash
# Times the CPU simulator on an 8-rank AllReduce of 1 MB (stdlib/
# allreduce_2pa_hb.mscl): the median wall time of several runs, for one
# schedule and for the default 50 schedules, from the .mscl source
# (frontend, pass pipeline and simulation).
# Usage: bench/simulator_time.sh [BUILD_DIR] [RUNS]   (default: build, 5)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
runs=${2:-5}
mscclc=$build/bin/mscclc
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Prints "wall cpu" medians in seconds; cpu = user + sys, which a shared
# machine inflates less than wall time.
median() {
  local schedules=$1
  for _ in $(seq "$runs"); do
    TIMEFORMAT='%R %U %S'
    { time "$mscclc" --simulate "$root/stdlib/allreduce_2pa_hb.mscl" \
        --ranks 8 --bytes 1M \
        --schedules "$schedules" > /dev/null; } 2>&1 | tail -1
  done > "$work/times"
  local wall cpu
  wall=$(awk '{print $1}' "$work/times" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  cpu=$(awk '{print $2 + $3}' "$work/times" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  printf "wall %.3f s, cpu %.3f s" "$wall" "$cpu"
}

echo "simulator, allreduce_2pa_hb, 8 ranks, 1 MB, f32 sum, median of $runs runs:"
echo "  1 schedule:   $(median 1)"
echo "  50 schedules: $(median 50)"
