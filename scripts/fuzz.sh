#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, ASan+UBSan, clang 22) in build-fuzz/
# and runs each for a while (docs/testing.md).
#
#   scripts/fuzz.sh --smoke              30 s per target; fails on a finding
#                                        (scripts/test.sh runs it in CI)
#   scripts/fuzz.sh --campaign [SECONDS] SECONDS per target (default 900),
#                                        going on past findings
#   scripts/fuzz.sh ... [TARGET...]      only these (mscl-source, mlir-text,
#                                        cost-model, plan-json,
#                                        bootstrap-wire, tcp-frame,
#                                        proxy-trigger, selection-table,
#                                        kernel-entry, command-line)
#
# The corpus of each target grows in build-fuzz/corpus/<target> from run
# to run; seeds are collected afresh (fuzz/collect-seeds.sh); a run's
# findings land in build-fuzz/findings/<run>/<target>/, its logs in
# build-fuzz/logs/<run>/ (<run>: the start time). MSCCLC_FUZZ_BUILD names
# another build folder. Builds and fuzzers run under `nice -n 19` (the
# machine is shared), with MSCCLC_JOBS (default 2) build jobs.
set -euo pipefail
cd "$(dirname "$0")/.."

MODE=${1:-}
shift || true
case "$MODE" in
  --smoke) SECONDS_PER_TARGET=30 ;;
  --campaign)
    SECONDS_PER_TARGET=900
    if [[ "${1:-}" =~ ^[0-9]+$ ]]; then SECONDS_PER_TARGET=$1; shift; fi ;;
  *) echo "usage: scripts/fuzz.sh --smoke|--campaign [SECONDS] [TARGET...]" >&2
     exit 2 ;;
esac
TARGETS=("$@")
((${#TARGETS[@]})) || TARGETS=(mscl-source mlir-text cost-model plan-json
                             bootstrap-wire tcp-frame proxy-trigger
                             selection-table kernel-entry command-line)

BUILD=${MSCCLC_FUZZ_BUILD:-build-fuzz}
CLANG_DIR=/usr/lib/llvm-22/bin
[ -x "$CLANG_DIR/clang++" ] || { echo "fuzz: needs clang-22 ($CLANG_DIR/clang++)" >&2; exit 1; }
if [ ! -f "$BUILD/build.ninja" ]; then
  echo "== configuring $BUILD/"
  nice -n 19 cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER="$CLANG_DIR/clang" -DCMAKE_CXX_COMPILER="$CLANG_DIR/clang++" \
    -DMSCCLC_BUILD_FUZZERS=ON -DMSCCLC_BUILD_TESTS=OFF -DMSCCLC_BUILD_RUNTIME=OFF \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir >/dev/null
fi
# The stdlib's MLIR and plans are seeds too: from the main build's
# compiler when there is one, else from an instrumented one built here.
MSCCLC=build/bin/mscclc
[ -x "$MSCCLC" ] || MSCCLC="$BUILD/bin/mscclc"
echo "== building the fuzz targets"
nice -n 19 ninja -C "$BUILD" -j "${MSCCLC_JOBS:-2}" \
  $(printf '%s-fuzzer ' "${TARGETS[@]}") \
  $([ "$MSCCLC" = "$BUILD/bin/mscclc" ] && echo mscclc)

# Leaks and UB are findings; a compile may take a while under ASan, a
# hang is an input over `-timeout` seconds. allow_user_poisoning=0: see
# fuzz/AsanOptions.cpp (an instrumented mscclc needs it too).
export ASAN_OPTIONS=${ASAN_OPTIONS:-allow_user_poisoning=0:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
echo "== the kept findings (fuzz/regressions)"
# Those of the targets built: the others' tests have no binary.
ctest --test-dir "$BUILD" -L fuzz --output-on-failure \
  -R "^fuzz-regressions-($(IFS='|'; echo "${TARGETS[*]}"))\$"
fuzz/collect-seeds.sh "$BUILD/seeds" "$MSCCLC"
RUN=$(date +%Y%m%d-%H%M%S)
failed=()
for target in "${TARGETS[@]}"; do
  corpus="$BUILD/corpus/$target" findings="$BUILD/findings/$RUN/$target"
  mkdir -p "$corpus" "$findings" "$BUILD/logs/$RUN"
  args=(-max_total_time="$SECONDS_PER_TARGET" -timeout=30 -rss_limit_mb=3072
        -max_len=65536 -print_final_stats=1 -artifact_prefix="$findings/")
  [ "$target" = mscl-source ] && args+=(-dict=fuzz/mscl.dict)
  # A campaign goes on after a finding (each is kept in $findings).
  [ "$MODE" = --campaign ] &&
    args+=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
  log="$BUILD/logs/$RUN/$target.log"
  echo "== fuzzing $target for ${SECONDS_PER_TARGET}s (log: $log)"
  if ! nice -n 19 "$BUILD/fuzz/$target-fuzzer" "${args[@]}" \
         "$corpus" "$BUILD/seeds/$target" >"$log" 2>&1; then
    failed+=("$target")
  fi
  grep -E '^#[0-9]+.*(cov|DONE)|stat::number_of_executed_units|stat::peak_rss' \
    "$log" | tail -3 || true
  if ls "$findings"/* >/dev/null 2>&1; then
    echo "   findings: $(ls "$findings" | wc -l) in $findings"
    failed+=("$target")
  fi
done
if ((${#failed[@]})); then
  echo "fuzz: findings in: $(printf '%s\n' "${failed[@]}" | sort -u | tr '\n' ' ')" >&2
  exit 1
fi
echo "fuzz: no findings"
