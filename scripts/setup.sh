#!/usr/bin/env bash
# Installs what mscclc needs on Debian 12 (skips what is already there) and
# configures + builds it with CMake and Ninja into ./build.
#
# With MSCCLC_COMPILER set to a prebuilt mscclc binary (it links MLIR
# statically and runs anywhere with glibc >= 2.36), only the runtime, the
# host examples and their tests are built: for GPU hosts without MLIR 22.
#
# The runtime reads plans with nlohmann-json and formats its messages with
# fmt, both header-only. On a host where libfmt-dev cannot be installed
# (e.g. a GPU host with libfmt9 only and no package mirror), set
# MSCCLC_FMT_INCLUDE_DIR to a folder holding a copy of fmt's headers (the
# `fmt/` folder of another machine's /usr/include): the build then uses it
# (CMake cache variable of the same name) and libfmt-dev is not installed.
set -euo pipefail
cd "$(dirname "$0")/.."

# Every build: the runtime (nlohmann-json, fmt) and its unit tests
# (GoogleTest); OpenSSL's libcrypto for the bootstrap's handshakes.
# rdma-core's headers for the RDMA device probe (libibverbs is opened at
# run time, never linked).
PACKAGES=(cmake ninja-build g++ libgtest-dev nlohmann-json3-dev libibverbs-dev
          libssl-dev)
CONFIG=(-DMSCCLC_BUILD_COMPILER=ON -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir
        -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit)
if [ -n "${MSCCLC_COMPILER:-}" ]; then
  [ -x "$MSCCLC_COMPILER" ] || { echo "MSCCLC_COMPILER=$MSCCLC_COMPILER is not an executable" >&2; exit 1; }
  echo "== using the prebuilt compiler $MSCCLC_COMPILER (runtime-only build)"
  CONFIG=(-DMSCCLC_BUILD_COMPILER=OFF)
else
  # The compiler: MLIR/LLVM 22 (mlir-tblgen, lit and FileCheck among the
  # tools), python3 for lit, and zlib and zstd, which MLIR's CMake package
  # links into LLVMSupport (ZLIB::ZLIB, zstd::libzstd_shared).
  PACKAGES+=(llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools python3
             zlib1g-dev libzstd-dev)
  # The lit tests compiling generated HIP (test/Backend/examples-hip-*):
  # ROCm 5.2's hipcc for gfx90a, LLVM 22's clang and lld for gfx942.
  PACKAGES+=(hipcc libamdhip64-dev rocm-device-libs clang-22 lld-22)
  # The smoke fuzz of scripts/test.sh: libFuzzer and the sanitizer
  # runtimes of clang 22 (only recommended by clang-22).
  PACKAGES+=(libclang-rt-22-dev)
  # The launcher tests start ranks with Open MPI's mpirun, as
  # docs/multinode.md shows (test/Runtime/launch.sh).
  PACKAGES+=(openmpi-bin)
fi
if [ -n "${MSCCLC_FMT_INCLUDE_DIR:-}" ]; then
  [ -f "$MSCCLC_FMT_INCLUDE_DIR/fmt/format.h" ] || { echo "MSCCLC_FMT_INCLUDE_DIR=$MSCCLC_FMT_INCLUDE_DIR has no fmt/format.h" >&2; exit 1; }
  CONFIG+=(-DMSCCLC_FMT_INCLUDE_DIR="$(cd "$MSCCLC_FMT_INCLUDE_DIR" && pwd)")
else
  PACKAGES+=(libfmt-dev)
fi

# A tool already on PATH counts as installed, however it got there.
declare -A COMMAND_OF=([cmake]=cmake [ninja-build]=ninja [g++]=g++ [python3]=python3
                        [openmpi-bin]=mpirun)
missing=()
for pkg in "${PACKAGES[@]}"; do
  cmd="${COMMAND_OF[$pkg]:-}"
  if [ -n "$cmd" ] && command -v "$cmd" >/dev/null 2>&1; then continue; fi
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "== installing: ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi

JOBS="${MSCCLC_JOBS:-$(nproc)}"
# The ahead-of-time kernels (docs/runtime.md): what the build compiles for
# the selection table's picks. This script (and so CI, scripts/test.sh)
# builds a small subset, sm_90 at 2 ranks (one node, root 0) in f32
# (seconds); CMake's own default, for release builds, is sm_80/90/100 at 2,
# 4 and 8 ranks and 2 nodes of 8 in f32, f16 and bf16 (see docs/runtime.md
# for its cost). MSCCLC_AOT_ARCHS, _RANKS, _DTYPES, _NODE_SHAPES (CMake
# lists, e.g. "80;90;100", "2x8;4x8" or none) and _ROOTS (0 or all) choose, and
# MSCCLC_AOT_BUILD=OFF leaves the store out; NVRTC runs on $JOBS threads.
CONFIG+=(-DMSCCLC_AOT_JOBS="$JOBS"
         -DMSCCLC_AOT_ARCHS="${MSCCLC_AOT_ARCHS:-90}"
         -DMSCCLC_AOT_RANKS="${MSCCLC_AOT_RANKS:-2}"
         -DMSCCLC_AOT_DTYPES="${MSCCLC_AOT_DTYPES:-f32}"
         -DMSCCLC_AOT_ROOTS="${MSCCLC_AOT_ROOTS:-0}"
         -DMSCCLC_AOT_NODE_SHAPES="${MSCCLC_AOT_NODE_SHAPES:-none}")
if [ -n "${MSCCLC_AOT_BUILD:-}" ]; then CONFIG+=(-DMSCCLC_AOT="$MSCCLC_AOT_BUILD"); fi
echo "== configuring (build/)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "${CONFIG[@]}" >/dev/null
echo "== building with $JOBS jobs"
ninja -C build -j "$JOBS" "$@"
