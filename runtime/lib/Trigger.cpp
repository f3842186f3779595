//===- Trigger.cpp - A port-channel trigger's bit layout ------------------===//

#include "mscclc/runtime/Trigger.h"

namespace mscclc::rt {

namespace {
constexpr uint64_t kMask36 = (uint64_t(1) << 36) - 1;
constexpr uint64_t kMask27 = (uint64_t(1) << 27) - 1;
} // namespace

Trigger decodeTrigger(uint64_t fst, uint64_t snd) {
  Trigger t;
  t.dstOffset = fst & kMask36;
  t.dstBuffer = uint32_t((fst >> 36) & 3);
  t.srcBuffer = uint32_t((fst >> 38) & 3);
  t.type = uint32_t((fst >> 40) & 7);
  t.proxyId = uint32_t((fst >> 43) & 0xffff);
  t.srcOffset = snd & kMask36;
  t.size = (snd >> 36) & kMask27;
  return t;
}

MscclcTrigger encodeTrigger(const Trigger &t) {
  MscclcTrigger e;
  e.fst = (t.dstOffset & kMask36) | (uint64_t(t.dstBuffer & 3) << 36) |
          (uint64_t(t.srcBuffer & 3) << 38) | (uint64_t(t.type & 7) << 40) |
          (uint64_t(t.proxyId & 0xffff) << 43);
  e.snd = (t.srcOffset & kMask36) | ((t.size & kMask27) << 36) | kTriggerValid;
  return e;
}

} // namespace mscclc::rt
