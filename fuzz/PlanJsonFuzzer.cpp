//===- PlanJsonFuzzer.cpp - The runtime's plan reader on any bytes -------===//
//
// Each input is a plan document (`mscclc --emit=plan`, docs/plan.md). The
// runtime reads plans from the kernel cache and from the compiler's
// output, so the reader must turn anything into a plan or an error. On
// success it also asks the plan what the runtime asks before indexing
// with it: buffer sizes and which ranks exchange user buffers.
//
//===----------------------------------------------------------------------===//

#include "mscclc/runtime/Plan.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  mscclc::rt::Plan plan;
  if (!mscclc::rt::parsePlan(text, &plan).isOk())
    return 0;
  for (uint64_t count : {uint64_t(1), uint64_t(1) << 20}) {
    (void)plan.inputElems(count);
    (void)plan.outputElems(count);
    (void)plan.scratchBytes(count, 8);
  }
  for (int rank = 0; rank < plan.ranks; ++rank) {
    (void)plan.needsPeerUserBuffers(rank);
    (void)plan.resultOffset(rank, 1024);
  }
  for (const std::string &dtype : plan.dtypes)
    (void)mscclc::rt::dtypeSize(dtype);
  return 0;
}
