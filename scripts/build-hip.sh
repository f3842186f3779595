#!/usr/bin/env bash
# Builds the runtime for AMD GPUs (MSCCLC_GPU_BACKEND=hip) into ./build-hip
# and runs its test, runtime-HipTest: no AMD GPU is needed (it checks the
# "no HIP device" path and turns a generated kernel into code objects for
# gfx90a with hipRTC and gfx942 with clang). Only the runtime library and
# that test are built. Needs ROCm's HIP (Debian: libamdhip64-dev, hipcc,
# rocm-device-libs; or /opt/rocm) and a compiler for the kernel: the
# MSCCLC_COMPILER binary, else build/bin/mscclc. scripts/test.sh runs it
# where HIP is installed.
set -euo pipefail
cd "$(dirname "$0")/.."

CONFIG=(-DMSCCLC_BUILD_COMPILER=OFF -DMSCCLC_GPU_BACKEND=hip)
if [ -d /opt/rocm ]; then CONFIG+=(-DCMAKE_PREFIX_PATH=/opt/rocm); fi
if [ -n "${MSCCLC_FMT_INCLUDE_DIR:-}" ]; then
  CONFIG+=(-DMSCCLC_FMT_INCLUDE_DIR="$(cd "$MSCCLC_FMT_INCLUDE_DIR" && pwd)")
fi
echo "== configuring the HIP runtime (build-hip/)"
cmake -S . -B build-hip -G Ninja -DCMAKE_BUILD_TYPE=Release "${CONFIG[@]}" >/dev/null
echo "== building the HIP runtime"
ninja -C build-hip -j "${MSCCLC_JOBS:-$(nproc)}" mscclc_runtime runtime-HipTest
compiler="${MSCCLC_COMPILER:-$PWD/build/bin/mscclc}"
echo "== testing the HIP runtime (compiler $compiler)"
MSCCLC_COMPILER="$compiler" ctest --test-dir build-hip --output-on-failure
