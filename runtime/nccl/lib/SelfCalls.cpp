//===- SelfCalls.cpp - The real NCCL's calls of its own exported functions ===//

#include "SelfCalls.h"

#include <cstdint>

namespace mscclc::nccl {
namespace {

/// How deep this thread is in calls into the real NCCL.
thread_local int realCallDepth = 0;

} // namespace

bool insideRealNccl() { return realCallDepth > 0; }

RealCallScope::RealCallScope() { ++realCallDepth; }
RealCallScope::~RealCallScope() { --realCallDepth; }

bool calledByRealNccl(const void *returnAddress) {
  if (realCallDepth > 0)
    return true;
  const RealNccl *real = loadedRealNccl();
  if (!real)
    return false;
  auto address = reinterpret_cast<uintptr_t>(returnAddress);
  for (const RealNccl::CodeRange &range : real->code)
    if (address >= range.begin && address < range.end)
      return true;
  return false;
}

} // namespace mscclc::nccl
