#!/usr/bin/env bash
# The GPU tests with several ranks on each GPU: builds (runtime-only when
# MSCCLC_COMPILER names a prebuilt mscclc), then runs the self-test, the
# time-out and abort tests, every stdlib file, mscclcRunCollective (the
# table's picks, across the LL epoch's wrap-around, and a 10,000-call
# random soak at 4 ranks), the NCCL library's PreMulSum at 2, 4 and 8
# ranks, compute-sanitizer at 4 ranks, 2 virtual nodes x 2 ranks (over
# TCP and ib staged), the
# ahead-of-time first call and the fallback under a preloaded real NCCL, one pass
# per rank count, logs under OUT (default build/shared-gpu-logs). These are
# correctness runs: no timing here is a link figure.
#   bench/run_shared_gpu.sh [RANKS...]       (default: 2 4 8)
# STEPS=REGEX runs only the steps whose name matches (e.g.
# 'run-collective|fp8' or 'collectives-2nodes'), to fit a short device slot.
# BUDGET_S=N ends every step by N seconds after the script started (a step
# that would get under 10 s is skipped and says so), to end inside a call's
# time limit with every log written.
set -u
ends=$(( $(date +%s) + ${BUDGET_S:-1000000} ))
cd "$(dirname "$0")/.."
OUT="${OUT:-build/shared-gpu-logs}"
mkdir -p "$OUT"
export MSCCLC_DISABLE_MULTICAST=1 NCCL_NVLS_ENABLE=0
export TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export MSCCLC_CACHE_DIR="${MSCCLC_CACHE_DIR:-/tmp/mscclc-cache}"
scripts/setup.sh > "$OUT/build.log" 2>&1 || { echo "build failed:"; tail -30 "$OUT/build.log"; exit 1; }
export MSCCLC_COMPILER="${MSCCLC_COMPILER:-$PWD/build/bin/mscclc}"

step() { # name time-limit command...: runs it, prints its verdict lines
  local name=$1 limit=$2; shift 2
  [[ -n "${STEPS:-}" && ! "$name" =~ $STEPS ]] && return
  local start=$(date +%s)
  (( limit > ends - start )) && limit=$(( ends - start ))
  (( limit < 10 )) && { echo "$name: not run (BUDGET_S spent)"; return; }
  timeout -s KILL "$limit" "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  echo "$name: exit $rc in $(( $(date +%s) - start )) s: $(grep -E 'passed|FAILED|PASSED|SKIPPED' "$OUT/$name.log" | tail -2 | cut -c1-200 | tr '\n' ' ')$(transports "$OUT/$name.log")"
}
transports() { # LOG: " (port channels: ib staged x2, ...)", from MSCCLC_LOG=info
  local t
  t=$(grep -oE 'port channels to ranks? [0-9, ]+ over [a-z ]+ \(' "$1" |
      sed -E 's/.* over ([a-z ]+) \(/\1/' | sort | uniq -c |
      awk '{n = $1; $1 = ""; printf "%s%s x%s", s, substr($0, 2), n; s = ", "}')
  [ -n "$t" ] && echo " (port channels, lines per transport: $t)"
}
B=build/bin
RANKS=(${@:-2 4 8})
for r in "${RANKS[@]}"; do
  # 8 ranks with port channels need more than CUDA's default 8 hardware
  # work queues (docs/runtime.md, "Several ranks on one GPU").
  queues=()
  [ "$r" -gt 4 ] && queues=(env CUDA_DEVICE_MAX_CONNECTIONS=32)
  step "selftest-$r" 300 "${queues[@]}" $B/runtime-gpu-selftest --quick --ranks "$r"
  step "timeout-$r" 120 $B/runtime-gpu-selftest --timeout-test --ranks "$r"
  step "abort-$r" 120 $B/runtime-gpu-selftest --abort-test --ranks "$r"
  # Every stdlib algorithm, fp32/fp16/bf16/int32, 1 element to 64 MiB,
  # in and out of place, 100 back-to-back launches, at 1 and 8 instances
  # (shapes that do not fit the GPU are refused: SKIP lines).
  for k in 1 8; do
    step "collectives-$r-i$k" 600 "${queues[@]}" $B/runtime-gpu-collectives \
      --examples stdlib --models group --types f32,f16,bf16,i32 \
      --max-bytes 67108864 --repeat 100 --instances $k --ranks "$r"
  done
  # A buffer reallocated larger at its address gets a context of its own.
  step "buffer-reuse-$r" 120 "${queues[@]}" $B/runtime-gpu-buffer-reuse \
    --stdlib stdlib --ranks "$r"
  # Every dtype and op at small sizes (1 element to 64 KiB per buffer)
  # through every stdlib file: all 12 types at 2 ranks; at 4 and 8 ranks
  # half of them each, so every type runs at 2 and one larger count. At 8
  # ranks every (file, type, op) is a cold NVRTC compile of 8 kernels
  # (sum's six types: 441 s on an H100), so prod, min and max take two of
  # the six each, together all six.
  case $r in
    2) types=all ;;
    4) types=f32,f16,bf16,f64,i8,u8 ;;
    *) types=i32,u32,i64,u64,f8e4m3,f8e5m2 ;;
  esac
  declare -A sampled=()
  [ "$r" -gt 4 ] && sampled=([prod]=i32,f8e4m3 [min]=u32,f8e5m2 [max]=i64,u64)
  for op in sum prod min max avg; do
    step "collectives-$op-$r" 600 "${queues[@]}" $B/runtime-gpu-collectives \
      --examples stdlib --models group --types "${sampled[$op]:-$types}" --op $op \
      --max-bytes 65536 --repeat 0 --ranks "$r"
  done
  # avg through the port-channel files with only 4 hardware queues, where
  # work queued behind the collective's kernel once held up the proxy's
  # stream (bench/results/2026-12-05-h200x1.md); a time-out is a failure.
  [ "$r" = 2 ] && step "avg-ports-q4-$r" 300 env CUDA_DEVICE_MAX_CONNECTIONS=4 \
    MSCCLC_TIMEOUT_MS=2000 $B/runtime-gpu-collectives --examples stdlib \
    --models group --only allreduce_2pr,reducescatter_port,allreduce_2pa_port,reduce_port \
    --op avg --types all --max-bytes 65536 --repeat 0 --ranks "$r"
  # fp8 (e4m3, e5m2) through every stdlib file, 1 element to 64 MiB.
  step "collectives-fp8-$r" 600 "${queues[@]}" $B/runtime-gpu-collectives \
    --examples stdlib --models group --types f8e4m3,f8e5m2 \
    --max-bytes 67108864 --repeat 20 --ranks "$r"
  # mscclcRunCollective: the stdlib selection's picks for every collective,
  # every dtype and op at small counts, f32/bf16/fp8 sums to 16 MiB.
  step "run-collective-$r" 600 "${queues[@]}" $B/runtime-gpu-run-collective \
    --quick --max-bytes 16777216 --ranks "$r"
  # LL flags across the 32-bit epoch wrap-around.
  step "epoch-wrap-$r" 300 "${queues[@]}" $B/runtime-gpu-run-collective \
    --epoch-wrap --ranks "$r"
  # The NCCL library's PreMulSum, natively: host and device scalars, one
  # per rank, all-reduce, reduce-scatter in place and reduce.
  step "nccl-premulsum-$r" 120 env MSCCLC_ALLOW_SHARED_GPU=1 \
    $B/nccl-gpu-test --premulsum-test --ranks "$r"
  # The soak: 10,000 random calls, each checked (4 ranks only).
  [ "$r" = 4 ] && step "soak-$r" 600 $B/runtime-gpu-run-collective \
    --soak 10000 --seed 1 --ranks "$r"
  # compute-sanitizer at 4 ranks: the self-test and every stdlib file at
  # small sizes, racecheck and memcheck; the port-channel files also at 8
  # instances, whose kernels call their port operations out of line.
  if [ "$r" = 4 ]; then
    for tool in racecheck memcheck; do
      step "$tool-selftest-$r" 300 compute-sanitizer --tool $tool --error-exitcode 3 \
        $B/runtime-gpu-selftest --quick --ranks "$r"
      step "$tool-stdlib-$r" 600 compute-sanitizer --tool $tool --error-exitcode 3 \
        $B/runtime-gpu-collectives --examples stdlib --models group --quick \
        --types f32 --max-bytes 65536 --repeat 2 --ranks "$r"
      step "$tool-ports-i8-$r" 600 compute-sanitizer --tool $tool --error-exitcode 3 \
        $B/runtime-gpu-collectives --examples stdlib --models group --quick \
        --only allgather_port,allreduce_2pa_port,allreduce_2pr,reduce_port,gather_port,scatter_port --types f32 \
        --max-bytes 65536 --repeat 2 --instances 8 --ranks "$r"
    done
  fi
done
# Two virtual nodes x 2 ranks (TCP between them): every stdlib file that
# spans nodes, at 1 and 8 instances (the table's multi-node picks take 8
# from 64 KB), and the NCCL library's collectives, every one of which the
# table serves natively over nodes.
for k in 1 8; do
  step "collectives-2nodes-i$k" 600 env CUDA_DEVICE_MAX_CONNECTIONS=32 \
    $B/runtime-gpu-collectives --examples stdlib --models group --types f32,bf16 \
    --max-bytes 67108864 --repeat 20 --instances $k --ranks 4 --nodes 2
done
# The self-test and the time-out test (a time-out, a reset that drains the
# TCP frames in flight, a clean run) with every port channel over TCP.
step "selftest-tcp" 300 env MSCCLC_TRANSPORT=tcp CUDA_DEVICE_MAX_CONNECTIONS=32 \
  $B/runtime-gpu-selftest --quick --ranks 2
step "timeout-tcp" 300 env MSCCLC_TRANSPORT=tcp MSCCLC_TIMEOUT_MS=3000 \
  CUDA_DEVICE_MAX_CONNECTIONS=32 $B/runtime-gpu-selftest --timeout-test --ranks 2
# Ib staged between the 2 virtual nodes (TCP's frames and pinned host
# staging over RDMA rings), on the fake libibverbs as an HCA that registers
# host memory only; the verdict line counts the transports the ranks chose.
ibstaged=(env CUDA_DEVICE_MAX_CONNECTIONS=32 FAKE_IBVERBS_HOST_ONLY=1 MSCCLC_LOG=info
  MSCCLC_IBVERBS_LIBRARY="$PWD/build/lib/libfake-ibverbs.so")
step "collectives-2nodes-ibstaged" 600 "${ibstaged[@]}" \
  $B/runtime-gpu-collectives --examples stdlib --models group --types f32,bf16 \
  --max-bytes 67108864 --repeat 20 --instances 1 --ranks 4 --nodes 2
step "selftest-ibstaged" 300 "${ibstaged[@]}" MSCCLC_TRANSPORT=ib \
  $B/runtime-gpu-selftest --quick --ranks 2
step "nccl-collectives-2nodes" 600 env MSCCLC_ALLOW_SHARED_GPU=1 \
  MSCCLC_NODE_OF_RANK=0,0,1,1 CUDA_DEVICE_MAX_CONNECTIONS=32 \
  $B/nccl-gpu-test --collectives --quick --ranks 4
# Whether a copy from a second CUDA context passes work queued behind a
# waiting kernel, with one hardware queue (bench/queue_probe.cu).
step "queue-probe" 60 $B/mscclc-queue-probe
# A fresh process's first all-reduce from the ahead-of-time store, with
# NVRTC and the compiler made unavailable (the test sets MSCCLC_NVRTC and
# MSCCLC_COMPILER itself).
step "aot-first-call" 120 env MSCCLC_STDLIB_DIR="$PWD/stdlib" $B/runtime-gpu-aot-first-call \
  --store build/share/mscclc/kernels
# The fallback with the real NCCL loaded into the global scope first, as
# PyTorch does (its calls of its own functions reach ours).
REAL_NCCL=$(python3 -c 'import glob, site; print((glob.glob(site.getsitepackages()[0] + "/nvidia/nccl/lib/libnccl.so.2") + [""])[0])' 2>/dev/null)
[ -n "$REAL_NCCL" ] && step "nccl-fallback-preloaded" 120 \
  $B/nccl-gpu-test --fallback-test --quick --real-preloaded "$REAL_NCCL"

grep -h "^FAIL" "$OUT"/*.log | sort -u | head -20
