//===- scratch_bytes.cpp - Scratch bytes of one target, for a host check --===//
//
// Built twice by scratch-ll8.test: as the CUDA layout (LL16) with main, and
// with -DMSCCLC_TARGET_HIP=1 (LL8) providing hipScratchBytes. main checks
// that a scratch region sized for CUDA kernels also holds the HIP layout of
// the same plan (docs/kernel-abi.md says so), and that the HIP packet
// buffers are laid out for 4 data bytes in 8-byte packets.
//
//===----------------------------------------------------------------------===//
#include "mscclc/device/Layout.h"

#include <cstdio>
#include <initializer_list>

mscclc_u64 hipScratchBytes(const MscclcScratchDesc *bufs, int n,
                           mscclc_u64 count, mscclc_u64 k, mscclc_u64 elem);

#if MSCCLC_TARGET_HIP
static_assert(MSCCLC_LL_PACKET_BYTES == 8 && MSCCLC_LL_DATA_BYTES == 4,
              "HIP lays out LL8 packets");
mscclc_u64 hipScratchBytes(const MscclcScratchDesc *bufs, int n,
                           mscclc_u64 count, mscclc_u64 k, mscclc_u64 elem) {
  return mscclc_scratch_bytes(bufs, n, count, k, elem);
}
#else
static_assert(MSCCLC_LL_PACKET_BYTES == 16 && MSCCLC_LL_DATA_BYTES == 8,
              "CUDA lays out LL16 packets");
int main() {
  const MscclcScratchDesc layouts[][3] = {{{1, 1}, {3, 0}, {2, 1}},
                                          {{4, 0}, {1, 1}, {5, 1}},
                                          {{2, 1}, {2, 1}, {1, 0}}};
  int failures = 0;
  for (const MscclcScratchDesc *bufs : layouts)
    for (mscclc_u64 count = 0; count < 600; ++count)
      for (mscclc_u64 k : {1ull, 3ull, 8ull})
        for (mscclc_u64 elem : {1ull, 2ull, 4ull, 8ull}) {
          const mscclc_u64 cuda = mscclc_scratch_bytes(bufs, 3, count, k, elem);
          const mscclc_u64 hip = hipScratchBytes(bufs, 3, count, k, elem);
          if (hip > cuda && failures++ < 5)
            std::printf("count %llu k %llu elem %llu: HIP %llu > CUDA %llu\n",
                        count, k, elem, hip, cuda);
        }
  std::printf("%d layouts where HIP needs more\n", failures);
  return failures != 0;
}
#endif
