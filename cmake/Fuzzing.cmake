# The libFuzzer build (-DMSCCLC_BUILD_FUZZERS=ON, clang only; see
# docs/testing.md and scripts/fuzz.sh). Everything this project compiles is
# instrumented for coverage and checked by the sanitizers, so a bug in a
# library a fuzz target reaches shows up as a crash with a stack; the
# prebuilt MLIR and LLVM libraries are not instrumented.

if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "MSCCLC_BUILD_FUZZERS needs clang (libFuzzer), not "
          "${CMAKE_CXX_COMPILER_ID}: configure with "
          "-DCMAKE_CXX_COMPILER=/usr/lib/llvm-22/bin/clang++")
endif()

set(MSCCLC_FUZZ_SANITIZERS "address,undefined" CACHE STRING
    "Sanitizers of the fuzz build (-fsanitize=...)")
# UBSan aborts instead of printing and going on: libFuzzer must see a
# finding as a crash, and keep its input.
add_compile_options(-fsanitize=fuzzer-no-link,${MSCCLC_FUZZ_SANITIZERS}
                    -fno-sanitize-recover=all -fno-omit-frame-pointer
                    -gline-tables-only)
add_link_options(-fsanitize=${MSCCLC_FUZZ_SANITIZERS})
