#!/usr/bin/env bash
# Builds the compiler and the runtime with AddressSanitizer and
# UndefinedBehaviorSanitizer (clang 22) in build-asan/ and runs the lit
# suite and every ctest test under them (docs/testing.md). GPU tests skip
# where there is no GPU, as in the plain build.
#
#   scripts/sanitize.sh              configure (once), build, lit, ctest
#   scripts/sanitize.sh -R REGEX     only the ctest tests matching REGEX
#                                    (after lit; MSCCLC_SKIP_LIT=1 skips it)
#
# MSCCLC_ASAN_BUILD names another build folder, MSCCLC_JOBS the build and
# test jobs (default 2). Everything runs under `nice -n 19`: the build is
# heavy (about an hour on two cores) and the machine may be shared.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${MSCCLC_ASAN_BUILD:-build-asan}
JOBS=${MSCCLC_JOBS:-2}
CLANG_DIR=/usr/lib/llvm-22/bin
[ -x "$CLANG_DIR/clang++" ] || { echo "sanitize: needs clang-22 ($CLANG_DIR/clang++)" >&2; exit 1; }

# -fno-sanitize-recover: undefined behaviour ends the process, so a test
# cannot pass over it. -O1 keeps the build and the suites tolerably fast;
# the prebuilt MLIR and LLVM libraries are not instrumented.
SANITIZE="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
# The shared runtime: libnccl.so.2 links with --no-undefined, and a shared
# library can only get the __asan_* symbols from it (the static runtime
# goes into executables alone). The programs then find it by their rpath.
ASAN_LIB_DIR=$(dirname "$("$CLANG_DIR/clang++" -print-file-name=libclang_rt.asan-x86_64.so)")
[ -f "$ASAN_LIB_DIR/libclang_rt.asan-x86_64.so" ] || { echo "sanitize: no shared ASan runtime (libclang-rt-22-dev)" >&2; exit 1; }
LINK="-fsanitize=address,undefined -shared-libasan -Wl,-rpath,$ASAN_LIB_DIR"
if [ ! -f "$BUILD/build.ninja" ]; then
  echo "== configuring $BUILD/"
  # No CUDA language: the one CUDA program (bench/'s mscclc-bench) would
  # be compiled by nvcc's host compiler, which these flags do not fit. The
  # ahead-of-time store: the small subset of scripts/setup.sh (the full
  # default takes about an hour of NVRTC, which sanitizes nothing).
  nice -n 19 cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER="$CLANG_DIR/clang" -DCMAKE_CXX_COMPILER="$CLANG_DIR/clang++" \
    -DCMAKE_C_FLAGS="$SANITIZE" -DCMAKE_CXX_FLAGS="$SANITIZE" \
    -DCMAKE_C_FLAGS_RELEASE="-O1 -gline-tables-only" \
    -DCMAKE_CXX_FLAGS_RELEASE="-O1 -gline-tables-only" \
    -DCMAKE_EXE_LINKER_FLAGS="$LINK" -DCMAKE_SHARED_LINKER_FLAGS="$LINK" \
    -DCMAKE_CUDA_COMPILER=OFF \
    -DMSCCLC_BUILD_COMPILER=ON -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DMSCCLC_AOT_ARCHS=90 -DMSCCLC_AOT_RANKS=2 -DMSCCLC_AOT_DTYPES=f32 \
    -DMSCCLC_AOT_NODE_SHAPES=none -DMSCCLC_AOT_ROOTS=0 >/dev/null
fi
start=$(date +%s)
echo "== building $BUILD/ with $JOBS jobs"
nice -n 19 ninja -C "$BUILD" -j "$JOBS"
built=$(date +%s)

# halt_on_error: the first error ends the process (ASan's default, stated
# for UBSan too); abort_on_error makes that a SIGABRT, not exit code 1, so
# a lit test that expects a failure (`not mscclc ...`) cannot take a
# sanitizer report for one. log_path keeps every report in $REPORTS as
# well, where the end of this script looks: a report in a test that
# passes anyway still fails the run. allow_user_poisoning=0: LLVM's
# BumpPtrAllocator poisons slabs that the uninstrumented MLIR libraries
# then use (see fuzz/AsanOptions.cpp). Leaks are errors.
REPORTS="$(cd "$BUILD" && pwd)/sanitizer-reports"
rm -rf "$REPORTS"
mkdir -p "$REPORTS"
export ASAN_SYMBOLIZER_PATH=$CLANG_DIR/llvm-symbolizer
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:abort_on_error=1:detect_leaks=1:allow_user_poisoning=0:detect_stack_use_after_return=1:log_path=$REPORTS/asan}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:abort_on_error=1:print_stacktrace=1:log_path=$REPORTS/ubsan}
status=0
if [ "${MSCCLC_SKIP_LIT:-0}" != 1 ]; then
  echo "== lit (ASAN_OPTIONS=$ASAN_OPTIONS)"
  # Straight from lit, not through ctest: ctest's time-out for lit is
  # meant for the plain build.
  nice -n 19 /usr/lib/llvm-22/bin/lit -sv -j "$JOBS" "$BUILD/test" || status=1
fi
linted=$(date +%s)
echo "== ctest"
# nccl-gpu-torch runs an uninstrumented Python with this libnccl.so.2
# preloaded, which the ASan runtime refuses (it must come first).
nice -n 19 ctest --test-dir "$BUILD" --output-on-failure -j "$JOBS" \
  -E '^(lit|nccl-gpu-torch)$' "$@" || status=1
done_at=$(date +%s)
if ls "$REPORTS"/* >/dev/null 2>&1; then
  echo "== sanitizer reports ($REPORTS):"
  for report in "$REPORTS"/*; do
    echo "-- $report"
    head -40 "$report"
  done
  status=1
fi
echo "== sanitize: build $((built - start)) s, lit $((linted - built)) s," \
     "ctest $((done_at - linted)) s; $( ((status)) && echo FAILED || echo clean)"
exit $status
