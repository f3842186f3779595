#!/usr/bin/env bash
# Sets up and builds mscclc, then runs every test suite through ctest.
# GPU tests (label `gpu`) skip themselves where no GPU is present. Then
# the runtime's HIP build (scripts/build-hip.sh) and the smoke fuzz.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
echo "== running tests"
ctest --test-dir build --output-on-failure -j "${MSCCLC_JOBS:-$(nproc)}"
# The runtime built for HIP, where ROCm's HIP is installed (about 1 minute
# on 2 cores); MSCCLC_SKIP_HIP=1 leaves it out.
if [ "${MSCCLC_SKIP_HIP:-0}" != 1 ] &&
   { dpkg-query -W -f='${Status}' libamdhip64-dev 2>/dev/null | grep -q "install ok installed" ||
     [ -d /opt/rocm/lib/cmake/hip ]; }; then
  scripts/build-hip.sh
fi
# A short run of every fuzz target (docs/testing.md, about 7 minutes with
# its instrumented build): a crash, hang or leak fails the run. It needs
# the compiler's sources built with clang, so not on runtime-only hosts;
# MSCCLC_SKIP_FUZZ=1 leaves it out.
if [ -z "${MSCCLC_COMPILER:-}" ] && [ "${MSCCLC_SKIP_FUZZ:-0}" != 1 ]; then
  echo "== smoke fuzzing"
  scripts/fuzz.sh --smoke
fi
