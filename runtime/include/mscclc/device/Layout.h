//===- Layout.h - Chunk and scratch layout, shared by host and device ----===//
//
// The run-time sizes of chunks and scratch buffers (docs/kernel-abi.md,
// "Scratch layout"). Generated kernels compute the same expressions inline;
// the runtime calls these to size the scratch region from the plan.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_DEVICE_LAYOUT_H
#define MSCCLC_DEVICE_LAYOUT_H

#include "mscclc/device/KernelArgs.h"
#include "mscclc/device/Target.h"

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define MSCCLC_HD __host__ __device__ __forceinline__
#elif defined(__HIP__) || defined(__HIPCC_RTC__)
// HIP defines __forceinline__ in hip_runtime.h, which this file does not
// need otherwise.
#define MSCCLC_HD __host__ __device__ inline __attribute__((always_inline))
#else
#define MSCCLC_HD inline
#endif

// LL packets carry MSCCLC_LL_DATA_BYTES of data in MSCCLC_LL_PACKET_BYTES
// (mscclc/device/Target.h: LL16 on NVIDIA, LL8 on AMD).
#define MSCCLC_SCRATCH_ALIGN 256ull

/// First element of user-buffer chunk j: floor(j * count / K), computed
/// without overflowing 64 bits for any count below 2^63 / K.
MSCCLC_HD mscclc_u64 mscclc_chunk_begin(mscclc_u64 j, mscclc_u64 count,
                                        mscclc_u64 k) {
  return j * (count / k) + (j * (count % k)) / k;
}

/// Elements of one scratch chunk: ceil(count / K).
MSCCLC_HD mscclc_u64 mscclc_scratch_chunk_elems(mscclc_u64 count,
                                                mscclc_u64 k) {
  return (count + k - 1) / k;
}

/// LL packets per scratch chunk of a packet buffer.
MSCCLC_HD mscclc_u64 mscclc_packets_per_chunk(mscclc_u64 count, mscclc_u64 k,
                                              mscclc_u64 elemSize) {
  return (mscclc_scratch_chunk_elems(count, k) * elemSize +
          MSCCLC_LL_DATA_BYTES - 1) /
         MSCCLC_LL_DATA_BYTES;
}

MSCCLC_HD mscclc_u64 mscclc_align_scratch(mscclc_u64 bytes) {
  return (bytes + MSCCLC_SCRATCH_ALIGN - 1) & ~(MSCCLC_SCRATCH_ALIGN - 1);
}

/// Bytes of one scratch buffer of `chunks` chunks (both parity halves for a
/// packet buffer).
MSCCLC_HD mscclc_u64 mscclc_scratch_buffer_bytes(mscclc_u64 chunks, int packet,
                                                 mscclc_u64 count,
                                                 mscclc_u64 k,
                                                 mscclc_u64 elemSize) {
  if (packet)
    return 2 * chunks * mscclc_packets_per_chunk(count, k, elemSize) *
           MSCCLC_LL_PACKET_BYTES;
  return chunks * mscclc_scratch_chunk_elems(count, k) * elemSize;
}

/// A scratch buffer as the plan lists it.
typedef struct MscclcScratchDesc {
  mscclc_u64 chunks;
  int packet;
} MscclcScratchDesc;

/// Byte offset of scratch buffer `index` in the scratch region.
MSCCLC_HD mscclc_u64 mscclc_scratch_offset(const MscclcScratchDesc *bufs,
                                           int index, mscclc_u64 count,
                                           mscclc_u64 k, mscclc_u64 elemSize) {
  mscclc_u64 offset = 0;
  for (int i = 0; i < index; ++i)
    offset = mscclc_align_scratch(
        offset + mscclc_scratch_buffer_bytes(bufs[i].chunks, bufs[i].packet,
                                             count, k, elemSize));
  return offset;
}

/// Bytes of the whole scratch region (0 when there is no scratch buffer).
MSCCLC_HD mscclc_u64 mscclc_scratch_bytes(const MscclcScratchDesc *bufs, int n,
                                          mscclc_u64 count, mscclc_u64 k,
                                          mscclc_u64 elemSize) {
  return mscclc_scratch_offset(bufs, n, count, k, elemSize);
}

#endif // MSCCLC_DEVICE_LAYOUT_H
