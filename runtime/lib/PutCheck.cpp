//===- PutCheck.cpp - The bounds every transport checks of a put ----------===//
//
// Apart from Transport.cpp (which probes the RDMA devices) so that the
// check builds without CUDA or rdma-core, for fuzz/ProxyTriggerFuzzer.cpp.
//
//===----------------------------------------------------------------------===//

#include "mscclc/runtime/Transport.h"

#include <fmt/format.h>

namespace mscclc::rt {

Status checkPut(const char *channel, int number, const PutBuffer src[3],
                const PutBuffer dst[3], uint32_t srcBuffer, uint64_t srcOffset,
                uint32_t dstBuffer, uint64_t dstOffset, uint64_t size) {
  if (srcBuffer > 2 || dstBuffer > 2 || !src[srcBuffer].mapped ||
      !dst[dstBuffer].mapped)
    return invalidArgument(fmt::format(
        "{} {} put names buffer {} -> {}, which is not mapped", channel,
        number, srcBuffer, dstBuffer));
  uint64_t srcExtent = src[srcBuffer].extent, dstExtent = dst[dstBuffer].extent;
  if (srcOffset > srcExtent || size > srcExtent - srcOffset ||
      dstOffset > dstExtent || size > dstExtent - dstOffset)
    return invalidArgument(fmt::format(
        "{} {} put of {} bytes at {} -> {} runs past a buffer (source {}: {} "
        "bytes, destination {}: {} bytes)",
        channel, number, static_cast<unsigned long long>(size),
        static_cast<unsigned long long>(srcOffset),
        static_cast<unsigned long long>(dstOffset), srcBuffer,
        static_cast<unsigned long long>(srcExtent), dstBuffer,
        static_cast<unsigned long long>(dstExtent)));
  return Status::ok();
}

} // namespace mscclc::rt
