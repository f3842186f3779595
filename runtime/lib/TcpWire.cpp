//===- TcpWire.cpp - The checks of the TCP transport's frames ------------===//

#include "mscclc/runtime/TcpWire.h"
#include "mscclc/runtime/BootstrapWire.h"

#include <fmt/format.h>

namespace mscclc::rt {

const TcpNetwork::Registry::Window *
TcpNetwork::Registry::find(uint64_t address, uint64_t size,
                           bool semaphores) const {
  for (const auto &[id, w] : windows) {
    uint64_t base = reinterpret_cast<uint64_t>(w.base);
    if (w.semaphores == semaphores && address >= base &&
        address - base <= w.size && size <= w.size - (address - base))
      return &w;
  }
  return nullptr;
}

namespace tcpwire {

const char *checkFrameHeader(const FrameHeader &h, uint64_t maxSlice) {
  if (h.magic != kFrameMagic)
    return "bad frame magic";
  if (h.reserved != 0 || h.id != 0)
    return "reserved field not zero";
  switch (h.type) {
  case kFrameData:
    if (h.size == 0 || h.size > maxSlice)
      return "data frame length is 0 or more than a slice";
    return nullptr;
  case kFrameSignal:
  case kFrameClose:
    return nullptr;
  case kFrameDrain:
    if (h.address != 0 || h.size != 0)
      return "drain frame with an address or a size";
    return nullptr;
  default:
    return "unknown frame type";
  }
}

const char *checkPairHello(const PairHello &h, const wire::Session &session,
                           uint64_t nonce, int nranks) {
  if (h.magic != kPairMagic)
    return "bad magic";
  // The proof next: nothing else of a stranger's frame is looked at.
  if (!session.verifyMessage(&h, sizeof(h)))
    return "a wrong proof of the secret";
  if (h.nonce != nonce)
    return "another communicator's nonce";
  if (h.rank >= uint32_t(nranks))
    return "rank out of range";
  return nullptr;
}

Status classifyFrame(const FrameHeader &h,
                     const TcpNetwork::Registry &registry, uint64_t maxSlice,
                     int peer, FrameAction *out) {
  if (const char *bad = checkFrameHeader(h, maxSlice))
    return systemError(fmt::format(
        "rank {} sent a malformed frame ({}): connection closed", peer, bad));
  if (h.type == kFrameClose || h.type == kFrameDrain) {
    *out = {h.type == kFrameClose ? FrameAction::Close : FrameAction::Drain,
            nullptr};
    return Status::ok();
  }
  if (h.type == kFrameSignal) {
    const auto *w = h.address % 8 == 0
                        ? registry.find(h.address, sizeof(uint64_t), true)
                        : nullptr;
    if (!w)
      return invalidArgument(fmt::format(
          "rank {} signals the word at {:#x}, which is no semaphore "
          "registered for it: refused",
          peer, static_cast<unsigned long long>(h.address)));
    *out = {FrameAction::Signal, w};
    return Status::ok();
  }
  const auto *w = registry.find(h.address, h.size, false);
  if (!w)
    return invalidArgument(fmt::format(
        "rank {} puts {} bytes at {:#x}, outside every window registered "
        "for it: out of bounds, refused",
        peer, static_cast<unsigned long long>(h.size),
        static_cast<unsigned long long>(h.address)));
  *out = {FrameAction::Data, w};
  return Status::ok();
}

} // namespace tcpwire
} // namespace mscclc::rt
