#!/usr/bin/env bash
# Installs what mscclc needs on Debian 12 (skips what is already there) and
# configures + builds it with CMake and Ninja into ./build.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  cmake ninja-build g++ python3
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools libzstd-dev
  libgtest-dev nlohmann-json3-dev libfmt-dev
)

missing=()
for pkg in "${PACKAGES[@]}"; do
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
echo "== configuring (build/)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
  -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit >/dev/null
echo "== building with $JOBS jobs"
ninja -C build -j "$JOBS" "$@"
