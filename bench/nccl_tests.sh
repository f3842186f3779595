#!/usr/bin/env bash
# The race over the NCCL API: builds nccl-tests from a source folder (its
# code is never part of this repository), runs the same binaries with the
# real NCCL and with mscclc's libnccl.so.2, and records both tables and a
# side-by-side summary in bench/results/<date>-nccl-tests-<host>.md.
#
#   bench/nccl_tests.sh NCCL_TESTS_SRC
#
# Environment (all optional):
#   REAL_NCCL      the real libnccl.so.2 (default: PyTorch's nvidia-nccl
#                  wheel found through python3, else the system's)
#   MSCCLC_BUILD   the build tree holding lib/libmscclc_nccl.so (build)
#   GPUS           ranks per run, one per GPU (default: all GPUs); every
#                  test also runs at -g 1
#   BYTES          "-b MIN -e MAX" (default "-b 8 -e 256M"); FACTOR (2)
#   ITERS WARMUP   -n and -w (default 50 and 10)
#   GRAPH          -G: CUDA graph launches per measurement (default 0;
#                  nccl-tests prints plain launches then)
#   TESTS          which binaries (default: all_reduce all_gather
#                  reduce_scatter broadcast reduce alltoall gather scatter
#                  sendrecv)
#   CUDA_HOME      (default /usr/local/cuda); GENCODE (sm_90)
# Several processes on one GPU are not run: mscclc's shared-GPU mode keeps
# every rank in one process (nccl-tests' -g runs them from one thread).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SRC=${1:?usage: bench/nccl_tests.sh NCCL_TESTS_SRC}
[ -f "$SRC/Makefile" ] && [ -d "$SRC/src" ] || { echo "$SRC is not an nccl-tests source folder" >&2; exit 1; }
SRC=$(cd "$SRC" && pwd)
MSCCLC_BUILD=$(cd "${MSCCLC_BUILD:-build}" && pwd)
OURS="$MSCCLC_BUILD/lib/libmscclc_nccl.so"
[ -f "$OURS" ] || { echo "no $OURS: build the mscclc_nccl target first" >&2; exit 1; }
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
GENCODE=${GENCODE:-"-gencode=arch=compute_90,code=sm_90"}
BYTES=${BYTES:-"-b 8 -e 256M"}
FACTOR=${FACTOR:-2}
ITERS=${ITERS:-50}
WARMUP=${WARMUP:-10}
GRAPH=${GRAPH:-0}
TESTS=${TESTS:-"all_reduce all_gather reduce_scatter broadcast reduce alltoall gather scatter sendrecv"}
GPUS=${GPUS:-$(nvidia-smi -L 2>/dev/null | wc -l)}
[ "$GPUS" -ge 1 ] || { echo "no GPU" >&2; exit 1; }
# Never NVLink multicast on shared machines.
export NCCL_NVLS_ENABLE=0 MSCCLC_DISABLE_MULTICAST=1

find_real_nccl() {
  if [ -n "${REAL_NCCL:-}" ]; then echo "$REAL_NCCL"; return; fi
  local site
  for site in $(python3 -c 'import site, sys; print(" ".join(site.getsitepackages() + [site.getusersitepackages()] + sys.path))' 2>/dev/null); do
    if [ -f "$site/nvidia/nccl/lib/libnccl.so.2" ]; then echo "$site/nvidia/nccl/lib/libnccl.so.2"; return; fi
  done
  ldconfig -p 2>/dev/null | awk '/libnccl\.so\.2 / {print $NF; exit}'
}
REAL=$(find_real_nccl)
[ -n "$REAL" ] && [ -f "$REAL" ] || { echo "no real NCCL found: set REAL_NCCL" >&2; exit 1; }
REAL_DIR=$(dirname "$REAL")

# nccl-tests builds against our nccl.h (the 2.28 API) and links -lnccl; which
# library serves it is chosen at run time.
WORK=$(mktemp -d /tmp/mscclc-nccl-tests.XXXXXX)
mkdir -p "$WORK/home/include" "$WORK/home/lib" "$WORK/ours"
cp runtime/nccl/include/nccl.h "$WORK/home/include/"
ln -s "$OURS" "$WORK/home/lib/libnccl.so"
ln -s "$OURS" "$WORK/ours/libnccl.so.2"
echo "== building nccl-tests from $SRC"
make -C "$SRC" -j "$(nproc)" BUILDDIR="$WORK/tests" NCCL_HOME="$WORK/home" \
  CUDA_HOME="$CUDA_HOME" NVCC_GENCODE="$GENCODE" MPI=0 > "$WORK/build.log" 2>&1 \
  || { tail -30 "$WORK/build.log"; exit 1; }

HOST=$(hostname -s)
DATE=$(date -u +%Y-%m-%d)
RESULT="$ROOT/bench/results/$DATE-nccl-tests-$HOST.md"
GPU_NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
REAL_VERSION=$(strings "$REAL" | grep -m1 -oE 'NCCL version [0-9.]+[^ ]*' || echo "unknown version")
ARGS="$BYTES -f $FACTOR -n $ITERS -w $WARMUP -G $GRAPH -c 1"

run() { # library-dir [NAME=VALUE...] binary args...
  local dir=$1; shift
  env LD_LIBRARY_PATH="$dir:${LD_LIBRARY_PATH:-}" "$@"
}

# Merges nccl-tests' two tables (real, ours) on message size: out-of-place
# time and bus bandwidth of each, and mscclc's speed-up.
summarise() { # real.log ours.log
  awk '
    function data(line) { return line ~ /^ *[0-9]+ +[0-9]+ +[a-z0-9]+ / }
    FNR == 1 { file++ }
    data($0) {
      n = split($0, f, " ")
      # size count type redop root time algbw busbw #wrong (out of place), then in place
      if (n < 9) next
      size = f[1]; sizes[size] = 1
      t[file, size] = f[6]; bw[file, size] = f[8]; wrong[file, size] = f[9]
    }
    END {
      for (s in sizes) {
        sp = (t[2, s] > 0) ? sprintf("%.2fx", t[1, s] / t[2, s]) : "-"
        printf "%s| %s | %s | %s | %s | %s | %s | %s |\n", s, s, t[1, s], t[2, s], sp, bw[1, s], bw[2, s], wrong[2, s]
      }
    }' "$1" "$2" | sort -t'|' -k1,1n | cut -d'|' -f2- | sed 's/^/|/' > "$WORK/rows"
  echo "| bytes | NCCL us | mscclc us | speed-up | NCCL busbw GB/s | mscclc busbw GB/s | mscclc #wrong |"
  echo "|---:|---:|---:|---:|---:|---:|---:|"
  cat "$WORK/rows"
}

{
  echo "# nccl-tests: NCCL vs mscclc ($DATE, $HOST)"
  echo
  echo "- GPUs: $GPUS x $GPU_NAME; real NCCL: $REAL ($REAL_VERSION); mscclc: $OURS"
  echo "- nccl-tests from $SRC ($(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo 'no git')), args: $ARGS"
  echo "- NCCL_NVLS_ENABLE=0, MSCCLC_DISABLE_MULTICAST=1; mscclc falls back to the real NCCL (MSCCLC_NCCL_LIBRARY) where its stdlib has no algorithm"
  echo "- Made by bench/nccl_tests.sh; the raw tables follow each summary."
} > "$RESULT"

for g in $(printf '%s\n' 1 "$GPUS" | sort -un); do
  for t in $TESTS; do
    bin="$WORK/tests/${t}_perf"
    [ -x "$bin" ] || { echo "no $bin (skipped)"; continue; }
    echo "== $t -g $g"
    run "$REAL_DIR" "$bin" $ARGS -g "$g" > "$WORK/$t-$g-nccl.log" 2>&1 || true
    run "$WORK/ours" MSCCLC_NCCL_LIBRARY="$REAL" MSCCLC_DEBUG=INFO "$bin" $ARGS -g "$g" \
      > "$WORK/$t-$g-mscclc.log" 2>&1 || true
    {
      echo
      echo "## ${t}_perf -g $g"
      echo
      summarise "$WORK/$t-$g-nccl.log" "$WORK/$t-$g-mscclc.log"
      echo
      echo "Where mscclc ran each size (its MSCCLC_DEBUG=INFO log):"
      echo '```'
      grep -E 'INFO NCCL rank 0/' "$WORK/$t-$g-mscclc.log" | sed 's/^.*INFO NCCL //' || true
      echo '```'
      echo
      echo "<details><summary>raw tables</summary>"
      echo
      echo '```'
      echo "# real NCCL"
      grep -vE 'INFO NCCL' "$WORK/$t-$g-nccl.log"
      echo "# mscclc"
      grep -vE 'INFO NCCL' "$WORK/$t-$g-mscclc.log"
      echo '```'
      echo "</details>"
    } >> "$RESULT"
  done
done
echo "== results: $RESULT (build and logs in $WORK)"
