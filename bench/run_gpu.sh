#!/usr/bin/env bash
# Builds the runtime on the GPU machine (CUDA + nvcc, no MLIR) and runs the
# requested stages, logging everything under $OUT:
#   bash bench/run_gpu.sh info selftest timeout sanitize collectives bench
# The compiler binary comes prebuilt in .carry/bin/mscclc (statically linked
# against MLIR); stages that need it skip when it is missing.
set -uo pipefail
cd "$(dirname "$0")/.."
# Never NVLink multicast on the lent machines (docs: DEVICE rules).
export MSCCLC_DISABLE_MULTICAST=1 NCCL_NVLS_ENABLE=0
export TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
OUT=${OUT:-/tmp/mscclc-out}
mkdir -p "$OUT"
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
    > "$OUT/build.log" 2>&1 &&
  ninja -C $BUILD -j 32 >> "$OUT/build.log" 2>&1
  local rc=$?
  echo "build: rc=$rc in $(( $(date +%s) - t0 )) s"
  [ $rc -eq 0 ] || { tail -40 "$OUT/build.log"; exit 1; }
}

run_logged() { # name command...
  local name=$1; shift
  local t0=$(date +%s)
  "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  echo "$name: rc=$rc in $(( $(date +%s) - t0 )) s"
  [ $rc -eq 0 ] || { status=1; tail -25 "$OUT/$name.log"; }
  return $rc
}

stage_selftest() {
  run_logged selftest $BUILD/bin/runtime-gpu-selftest --model all
  grep -E "passed|FAILED|FAIL|refused" "$OUT/selftest.log" | head -20
}
stage_timeout() {
  run_logged timeout $BUILD/bin/runtime-gpu-selftest --timeout-test
  grep -E "timeout" "$OUT/timeout.log" | head -5
}
stage_ctest() {
  run_logged ctest ctest --test-dir $BUILD --output-on-failure
  tail -8 "$OUT/ctest.log"
}
stage_sanitize() {
  for tool in memcheck racecheck; do
    run_logged sanitize-$tool compute-sanitizer --tool $tool --target-processes all \
      $BUILD/bin/runtime-gpu-selftest --model group --quick
    grep -E "ERROR SUMMARY|passed|FAILED" "$OUT/sanitize-$tool.log" | tail -3
  done
}
stage_collectives() {
  if [ -z "${MSCCLC_COMPILER:-}" ]; then echo "collectives: no compiler carried"; return; fi
  run_logged collectives $BUILD/bin/runtime-gpu-collectives --examples examples ${COLLECTIVE_ARGS:-}
  grep -E "^(PASS|FAIL|SKIP)|passed|failed" "$OUT/collectives.log" | tail -40
}
stage_bench() {
  if [ ! -x $BUILD/bin/mscclc-bench ]; then echo "bench: not built"; return; fi
  run_logged bench $BUILD/bin/mscclc-bench --examples examples --out "$OUT/bench.md" ${BENCH_ARGS:-}
  cat "$OUT/bench.md" 2>/dev/null | head -80
}

stage_build
for s in "$@"; do
  "stage_$s"
done
exit $status
