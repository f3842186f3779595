#!/usr/bin/env bash
# Sets up and builds mscclc, then runs every test suite through ctest.
# GPU tests (label `gpu`) skip themselves where no GPU is present.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
echo "== running tests"
ctest --test-dir build --output-on-failure -j "${MSCCLC_JOBS:-$(nproc)}"
