//===- CostModelFuzzer.cpp - The cost-model reader on any bytes -----------===//
//
// Each input is the text of a cost model (`mscclc --simulate --cost-model
// FILE`, docs/simulator.md). Whatever it holds, the reader accepts a flat
// object of finite numbers with positive rates, or returns an error: it
// never crashes, never recurses on nesting, and never leaves a value that
// would make an estimate infinite or NaN.
//
//===----------------------------------------------------------------------===//

#include "mscclc/Simulator/Simulator.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  mscclc::sim::CostModel model;
  if (!mscclc::sim::parseCostModel(text, "fuzz", model).empty())
    return 0;
  for (const auto &[key, value] : model.entries())
    if (!std::isfinite(value) || value < 0)
      abort(); // the reader let through what it promises to refuse
  return 0;
}
