#!/usr/bin/env bash
# Builds the runtime on the GPU machine (CUDA + nvcc, no MLIR) and runs the
# requested stages, logging everything under $OUT:
#   bash bench/run_gpu.sh info selftest timeout abort sanitize collectives bench
# `reference` prepares the hand-written kernels for `bench`: each
# bench/reference/NAME.cu gets the plan of the example it names (mscclc
# --emit=plan) with the generated kernel names replaced by its own, and
# BENCH_ARGS gains --reference.
# The compiler binary comes prebuilt in .carry/bin/mscclc (statically linked
# against MLIR); stages that need it skip when it is missing.
set -uo pipefail
cd "$(dirname "$0")/.."
# Never NVLink multicast on the lent machines (docs: DEVICE rules).
export MSCCLC_DISABLE_MULTICAST=1 NCCL_NVLS_ENABLE=0
export TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
OUT=${OUT:-/tmp/mscclc-out}
mkdir -p "$OUT"
# At most 8 files come back from the machine: logs go to LOGS and are packed
# into $OUT/logs.tgz after every stage (so a run cut short still returns them).
LOGS=/tmp/mscclc-logs
mkdir -p "$LOGS"
export MSCCLC_CACHE_DIR=${MSCCLC_CACHE_DIR:-/tmp/mscclc-cache}
BUILD=build-gpu
if [ -x .carry/bin/mscclc ]; then
  export MSCCLC_COMPILER=$PWD/.carry/bin/mscclc
fi
status=0

stage_info() {
  {
    date -u
    nvidia-smi --query-gpu=index,name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv
    nvidia-smi topo -m
    nvcc --version | tail -2
    ls /usr/include/nccl.h /usr/lib/x86_64-linux-gnu/libnccl* 2>&1
    grep -h NCCL_VERSION_CODE /usr/include/nccl.h | head -2
    nproc; uname -r
  } > "$OUT/hw.txt" 2>&1
  cat "$OUT/hw.txt"
}

stage_build() {
  local t0=$(date +%s)
  cmake -G Ninja -S . -B $BUILD -DCMAKE_BUILD_TYPE=Release \
    -DMSCCLC_BUILD_COMPILER=OFF -DCMAKE_CUDA_ARCHITECTURES=90 \
    > "$LOGS/build.log" 2>&1 &&
  ninja -C $BUILD -j 32 >> "$LOGS/build.log" 2>&1
  local rc=$?
  echo "build: rc=$rc in $(( $(date +%s) - t0 )) s"
  [ $rc -eq 0 ] || { tail -40 "$LOGS/build.log"; tar czf "$OUT/logs.tgz" -C "$LOGS" .; exit 1; }
}

run_logged() { # name command...
  local name=$1; shift
  local t0=$(date +%s)
  "$@" > "$LOGS/$name.log" 2>&1
  local rc=$?
  echo "$name: rc=$rc in $(( $(date +%s) - t0 )) s"
  [ $rc -eq 0 ] || { status=1; tail -25 "$LOGS/$name.log"; }
  return $rc
}

stage_selftest() {
  run_logged selftest $BUILD/bin/runtime-gpu-selftest --model all
  grep -E "passed|FAILED|FAIL|refused" "$LOGS/selftest.log" | head -20
}
stage_timeout() {
  run_logged timeout $BUILD/bin/runtime-gpu-selftest --timeout-test
  grep -E "timeout" "$LOGS/timeout.log" | head -5
}
stage_abort() {
  run_logged abort $BUILD/bin/runtime-gpu-selftest --abort-test
  grep -E "abort" "$LOGS/abort.log" | head -5
}
stage_ctest() {
  run_logged ctest ctest --test-dir $BUILD --output-on-failure
  tail -8 "$LOGS/ctest.log"
}
stage_sanitize() {
  # Small cases of the generated kernels (one process, both GPUs), or the
  # hand-written self-test kernels when no compiler was carried.
  local args="--models group --quick --types f32 --max-bytes 65536 --repeat 0"
  for tool in memcheck racecheck; do
    if [ -n "${MSCCLC_COMPILER:-}" ]; then
      run_logged sanitize-$tool compute-sanitizer --tool $tool \
        $BUILD/bin/runtime-gpu-collectives --examples stdlib $args \
        --only ${SANITIZE_ONLY:-allreduce_1pa,allreduce_2pa_hb,allreduce_2pa_port}
      # 8 instances: many blocks, data loops out of line.
      run_logged sanitize-$tool-i8 compute-sanitizer --tool $tool \
        $BUILD/bin/runtime-gpu-collectives --examples stdlib $args --instances 8 \
        --only ${SANITIZE_ONLY:-allreduce_1pa,allreduce_2pa_hb,allreduce_2pa_port}
      grep -E "ERROR SUMMARY|passed,|FAIL" "$LOGS/sanitize-$tool-i8.log" | tail -4
    else
      run_logged sanitize-$tool compute-sanitizer --tool $tool \
        $BUILD/bin/runtime-gpu-selftest --model group --quick
    fi
    grep -E "ERROR SUMMARY|passed,|FAIL" "$LOGS/sanitize-$tool.log" | tail -4
  done
}
stage_collectives() {
  if [ -z "${MSCCLC_COMPILER:-}" ]; then echo "collectives: no compiler carried"; return; fi
  # Every type up to 64 MiB in both process models (1000 back-to-back
  # launches in the group model), then fp32 up to 1 GiB.
  run_logged collectives-procs $BUILD/bin/runtime-gpu-collectives --examples stdlib \
    --models procs --max-bytes 67108864 --repeat 0 ${COLLECTIVE_ARGS:-}
  run_logged collectives-group $BUILD/bin/runtime-gpu-collectives --examples stdlib \
    --models group --max-bytes 16777216 --repeat 1000 ${COLLECTIVE_ARGS:-}
  run_logged collectives-1g $BUILD/bin/runtime-gpu-collectives --examples stdlib \
    --models group --types f32 --max-bytes 1073741824 --repeat 0 --quick \
    --only ${BIG_ONLY:-allreduce_2pa_hb,allreduce_2pr,allgather_allpairs,reducescatter_ring_overlap}
  # Every example with 8 instances (many blocks, out-of-line data loops).
  run_logged collectives-i8 $BUILD/bin/runtime-gpu-collectives --examples stdlib \
    --models group --instances 8 --max-bytes 16777216 --repeat 100 ${COLLECTIVE_ARGS:-}
  # User buffers from mscclcMemAlloc (cuMem) in the one-process model.
  run_logged collectives-cumem $BUILD/bin/runtime-gpu-collectives --examples stdlib \
    --models group --memalloc --max-bytes 4194304 --repeat 10 ${COLLECTIVE_ARGS:-}
  for f in collectives-procs collectives-group collectives-1g collectives-i8 collectives-cumem; do
    echo "== $f"; grep -E "^(FAIL|SKIP)|passed,|rank passed|FAILED| in [0-9.]+ s" "$LOGS/$f.log" | head -40
  done
}
stage_mainjob() {
  # The README's main job, with the carried compiler (no MLIR here).
  if [ -z "${MSCCLC_COMPILER:-}" ]; then echo "mainjob: no compiler carried"; return; fi
  run_logged mainjob scripts/run.sh
  tail -12 "$LOGS/mainjob.log"
}
stage_reference() {
  if [ -z "${MSCCLC_COMPILER:-}" ]; then echo "reference: no compiler carried"; return; fi
  local dir=/tmp/mscclc-reference
  mkdir -p $dir
  for cu in bench/reference/*.cu; do
    local name=$(basename "$cu" .cu)
    # The first example the reference names is the one it re-implements.
    local example=$(grep -oE 'stdlib/[a-z0-9_]+\.mscl' "$cu" | head -1)
    local kernel=$(grep -oE 'mscclc_ref_[a-z0-9_]+' "$cu" | head -1)
    cp "$cu" $dir/
    "$MSCCLC_COMPILER" "$example" --ranks ${REF_RANKS:-2} --emit=plan |
      sed -E "s/\"mscclc_[a-z0-9_]+_rank[0-9]+\"/\"$kernel\"/" > $dir/$name.plan.json
    echo "reference: $name from $example (kernel $kernel)"
  done
  BENCH_ARGS="${BENCH_ARGS:-} --reference $dir"
}
stage_bench() {
  if [ ! -x $BUILD/bin/mscclc-bench ]; then echo "bench: not built"; return; fi
  run_logged bench $BUILD/bin/mscclc-bench --examples stdlib --out "$OUT/bench.md" ${BENCH_ARGS:-}
  cat "$OUT/bench.md" 2>/dev/null | head -80
}

stage_build
for s in "$@"; do
  "stage_$s"
  tar czf "$OUT/logs.tgz" -C "$LOGS" . 2>/dev/null
done
exit $status
