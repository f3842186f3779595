//===- ProxyTriggerFuzzer.cpp - The proxy's trigger decoder on any bits --===//
//
// What a kernel can leave in its proxy FIFO, handled as the proxy does
// (Trigger.h, Transport.h): every 16 bytes of the input are a trigger's two
// halves. Each is decoded (and must encode back to itself), must name one
// of the three channels below, and a put must pass checkPut against that
// channel's buffers. Accepted puts are carried out with memcpy on host
// memory of exactly the buffers' sizes, some of them unmapped or empty: a
// put the check lets through outside a buffer is a crash under ASan, and
// one outside the extents it was checked against traps.
//
//===----------------------------------------------------------------------===//

#include "mscclc/runtime/Transport.h"
#include "mscclc/runtime/Trigger.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

using namespace mscclc::rt;

namespace {

/// A channel's buffers 0 (input), 1 (output), 2 (scratch) on both sides; a
/// size of -1 leaves the buffer unmapped.
struct Channel {
  std::unique_ptr<char[]> src[3], dst[3];
  PutBuffer srcBuf[3], dstBuf[3];
  Channel(std::array<int64_t, 3> srcSizes, std::array<int64_t, 3> dstSizes) {
    for (int b = 0; b < 3; ++b) {
      map(src[b], srcBuf[b], srcSizes[b]);
      map(dst[b], dstBuf[b], dstSizes[b]);
    }
  }
  static void map(std::unique_ptr<char[]> &p, PutBuffer &buf, int64_t size) {
    if (size < 0)
      return;
    p = std::make_unique<char[]>(size_t(size) + (size == 0)); // never null
    buf = {true, uint64_t(size)};
  }
};

bool sameTrigger(const Trigger &a, const Trigger &b) {
  return a.dstOffset == b.dstOffset && a.dstBuffer == b.dstBuffer &&
         a.srcBuffer == b.srcBuffer && a.type == b.type &&
         a.proxyId == b.proxyId && a.srcOffset == b.srcOffset &&
         a.size == b.size;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using Sizes = std::array<int64_t, 3>;
  std::vector<std::unique_ptr<Channel>> channels;
  channels.push_back(std::make_unique<Channel>(Sizes{4096, 4096, 256},
                                               Sizes{4096, 4096, 256}));
  channels.push_back(
      std::make_unique<Channel>(Sizes{1, -1, 100}, Sizes{-1, 7, 0}));
  channels.push_back(
      std::make_unique<Channel>(Sizes{0, 0, 0}, Sizes{64, 64, 64}));
  for (; size >= 16; data += 16, size -= 16) {
    uint64_t fst, snd;
    memcpy(&fst, data, 8);
    memcpy(&snd, data + 8, 8);
    Trigger t = decodeTrigger(fst, snd);
    MscclcTrigger e = encodeTrigger(t);
    if (!(e.snd & kTriggerValid) ||
        !sameTrigger(decodeTrigger(e.fst, e.snd), t))
      __builtin_trap(); // the layout does not round-trip
    if (t.proxyId >= channels.size() || !(t.type & kTriggerPut))
      continue; // refused by ProxyFifo::handle, or no bytes to move
    Channel &ch = *channels[t.proxyId];
    if (!checkPut("port channel", int(t.proxyId), ch.srcBuf, ch.dstBuf,
                  t.srcBuffer, t.srcOffset, t.dstBuffer, t.dstOffset, t.size)
             .isOk())
      continue;
    const PutBuffer &s = ch.srcBuf[t.srcBuffer], &d = ch.dstBuf[t.dstBuffer];
    if (!s.mapped || !d.mapped || t.srcOffset + t.size > s.extent ||
        t.dstOffset + t.size > d.extent)
      __builtin_trap(); // accepted a put outside its buffers
    if (t.size > 0)
      memcpy(ch.dst[t.dstBuffer].get() + t.dstOffset,
             ch.src[t.srcBuffer].get() + t.srcOffset, t.size);
  }
  return 0;
}
