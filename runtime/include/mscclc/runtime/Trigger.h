//===- Trigger.h - A port-channel trigger and its bit layout --*- C++ -*-===//
//
// A kernel asks its proxy for a put, a signal or a flush with a 16-byte
// trigger in the proxy FIFO (docs/kernel-abi.md). The proxy reads it from
// memory the GPU writes, so it decodes any bits and checks what it names
// (Transport.h's checkPut) before moving a byte. Nothing here calls CUDA:
// the decoder is fuzzed on its own (fuzz/ProxyTriggerFuzzer.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_TRIGGER_H
#define MSCCLC_RUNTIME_TRIGGER_H

#include "mscclc/device/KernelArgs.h"

#include <cstdint>

namespace mscclc::rt {

enum TriggerType : uint32_t {
  kTriggerPut = 1,
  kTriggerSignal = 2,
  kTriggerFlush = 4,
};

/// Set in the second half by the pushing kernel, last: a slot whose second
/// half lacks it is still being written.
constexpr uint64_t kTriggerValid = uint64_t(1) << 63;

struct Trigger {
  uint64_t dstOffset = 0;
  uint32_t dstBuffer = 0;
  uint32_t srcBuffer = 0;
  uint32_t type = 0;
  uint32_t proxyId = 0;
  uint64_t srcOffset = 0;
  uint64_t size = 0;
};

/// The bit layout of docs/kernel-abi.md.
Trigger decodeTrigger(uint64_t fst, uint64_t snd);
/// The inverse (host tests and host-side pushes); sets the valid bit.
MscclcTrigger encodeTrigger(const Trigger &t);

} // namespace mscclc::rt

#endif // MSCCLC_RUNTIME_TRIGGER_H
