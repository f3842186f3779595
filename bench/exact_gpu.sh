#!/usr/bin/env bash
# The GPU side of exact proofs (issue "Proofs that hold at every count"),
# several ranks on one GPU: builds the runtime with scripts/setup.sh (the
# compiler comes prebuilt in .carry/bin/mscclc, fmt's headers in
# .carry/include), then
#  - the self-test, and every stdlib file at uneven counts (the kernels go
#    chunk by chunk, place scratch by its layout count, touch one LL packet
#    when empty);
#  - test/Verification/exact and the generator's sample (GEN, a folder of
#    folders named rR-iK, one per rank and instance count) bit for bit
#    against the proof's expressions (--exprs), f32 and i32 sums;
#  - compute-sanitizer on the group and LL programs of exact/;
#  - the two splits of a thread-block group, timed (bench/groups).
# Logs under OUT (at most 8 files come back): summary.txt and logs.tgz.
#   OUT=... GEN=... [DEADLINE=560] bench/exact_gpu.sh [STEP_REGEX]
# DEADLINE (seconds from the start, default 560: a device call may run
# 600) stops starting steps, and cuts the last one short, so the logs
# always come back. A wait that never ends gives up after
# MSCCLC_TIMEOUT_MS (5 s here: correct programs finish in milliseconds).
set -uo pipefail
cd "$(dirname "$0")/.."
export MSCCLC_DISABLE_MULTICAST=1 NCCL_NVLS_ENABLE=0
export TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export MSCCLC_CACHE_DIR=${MSCCLC_CACHE_DIR:-/tmp/mscclc-cache}
export MSCCLC_TIMEOUT_MS=${MSCCLC_TIMEOUT_MS:-5000}
DEADLINE=${DEADLINE:-560}
OUT=${OUT:-/tmp/mscclc-out}
LOGS=/tmp/exact-logs
mkdir -p "$OUT" "$LOGS"
STEPS=${1:-.}
export MSCCLC_COMPILER=$PWD/.carry/bin/mscclc
B=build/bin
summary() { echo "$*" | tee -a "$OUT/summary.txt"; }
pack() { tar czf "$OUT/logs.tgz" -C "$LOGS" . 2>/dev/null; }

t0=$(date +%s)
{
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  nvcc --version | tail -1
} > "$LOGS/hw.txt" 2>&1
summary "hardware: $(head -1 "$LOGS/hw.txt")"
if [ ! -x $B/runtime-gpu-collectives ] || [ ! -x $B/mscclc-bench ]; then
  MSCCLC_FMT_INCLUDE_DIR="$PWD/.carry/include" scripts/setup.sh \
    > "$LOGS/build.log" 2>&1
  rc=$?
  summary "build: rc=$rc in $(( $(date +%s) - t0 )) s"
  [ $rc -eq 0 ] || { tail -30 "$LOGS/build.log" | tee -a "$OUT/summary.txt"; pack; exit 1; }
fi

step() { # name limit command...: runs it, keeps the verdict lines
  local name=$1 limit=$2; shift 2
  [[ "$name" =~ $STEPS ]] || return 0
  local s=$(date +%s)
  local left=$(( DEADLINE - (s - t0) ))
  if [ "$left" -lt 20 ]; then summary "$name: not run (deadline)"; return 0; fi
  [ "$limit" -gt "$left" ] && limit=$left
  timeout -s KILL "$limit" "$@" > "$LOGS/$name.log" 2>&1
  local rc=$?
  summary "$name: rc=$rc in $(( $(date +%s) - s )) s: $(grep -E '^(passed|[0-9]+ passed)|FAIL|SKIPPED' "$LOGS/$name.log" | tail -2 | cut -c1-300 | tr '\n' ' ')"
  grep -E '^FAIL' "$LOGS/$name.log" | head -5 >> "$OUT/summary.txt"
  pack
}

collectives() { # name limit args...
  local name=$1 limit=$2; shift 2
  step "$name" "$limit" env CUDA_DEVICE_MAX_CONNECTIONS=32 \
    $B/runtime-gpu-collectives --models group "$@"
}

step selftest-2 200 $B/runtime-gpu-selftest --quick --ranks 2
collectives stdlib-2 400 --examples stdlib --types f32,bf16,i32 \
  --max-bytes 4194304 --repeat 3 --ranks 2
collectives stdlib-4-i2 400 --examples stdlib --types f32 \
  --max-bytes 1048576 --repeat 3 --instances 2 --ranks 4
collectives stdlib-8 400 --examples stdlib --types f32 \
  --max-bytes 262144 --repeat 2 --ranks 8
for r in 2 3 4; do
  collectives exact-exprs-$r 300 --examples test/Verification/exact --exprs \
    --types f32,i32 --max-bytes 65536 --repeat 2 --ranks $r
done
if [ -n "${GEN:-}" ] && [ -d "$GEN" ]; then
  for d in "$GEN"/r*-i*; do
    r=${d##*/r}; r=${r%%-*}; k=${d##*-i}
    collectives "gen-exprs-r$r-i$k" 500 --examples "$d" --exprs \
      --types f32 --max-bytes 16384 --repeat 2 --instances "$k" --ranks "$r"
  done
fi
for tool in racecheck memcheck; do
  step "$tool-exact" 400 compute-sanitizer --tool $tool --error-exitcode 3 \
    $B/runtime-gpu-collectives --models group --examples test/Verification/exact \
    --only group_counts,ll_then_put,runs,park_scratch --types f32 \
    --max-bytes 8192 --repeat 1 --ranks 2
done
if [[ groups =~ $STEPS ]]; then
  bench/groups/make_variants.sh "$MSCCLC_COMPILER" /tmp/groups 2 8 \
    > "$LOGS/groups-prep.log" 2>&1
  step groups-bench 400 $B/mscclc-bench --examples stdlib --algos allreduce_2pa_hb@8 \
    --reference /tmp/groups --ranks 2 --no-nccl --max-bytes 268435456 \
    --out "$OUT/groups.md"
fi
summary "total: $(( $(date +%s) - t0 )) s"
pack
