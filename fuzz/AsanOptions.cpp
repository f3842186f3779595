//===- AsanOptions.cpp - ASan settings of the MLIR-linked fuzz targets ----===//
//
// LLVM's BumpPtrAllocator poisons the unused part of its slabs when its
// header is compiled under ASan, and unpoisons what it hands out; the
// prebuilt MLIR libraries allocate from the same slabs without doing so,
// which ASan takes for use-after-poison in code that is fine. Manual
// poisoning is therefore off; ASan's own checks (heap, stack, leaks) stay.
//
//===----------------------------------------------------------------------===//

extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}
