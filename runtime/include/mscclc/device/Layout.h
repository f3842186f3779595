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

/// Elements a pipeline iteration takes of every chunk it names: the unit
/// (bytes) rounded down to a multiple of 16 bytes, at least 16, so slices
/// keep the vector alignment and packet boundaries of the whole.
MSCCLC_HD mscclc_u64 mscclc_pipeline_unit_elems(mscclc_u64 unitBytes,
                                                mscclc_u64 elemSize) {
  const mscclc_u64 bytes = unitBytes < 16 ? 16 : unitBytes / 16 * 16;
  return bytes / elemSize;
}

/// Iterations of a pipeline: enough for the largest chunk (a scratch chunk,
/// `chunkElems` = ceil(count / K)), whatever the body holds; a body that
/// only waits runs as often as its peer's that signals.
MSCCLC_HD mscclc_u64 mscclc_pipeline_trips(mscclc_u64 chunkElems,
                                           mscclc_u64 unitElems) {
  return (chunkElems + unitElems - 1) / unitElems;
}

/// The part of an operation's n elements that block `index` of a group of
/// `parts` thread blocks moves: [*begin, *end), cut at multiples of 16
/// bytes so that every slice keeps the vector alignment of the whole (and
/// LL packet and step boundaries); the last slices may be empty.
MSCCLC_HD void mscclc_group_slice(mscclc_u64 n, mscclc_u64 index,
                                  mscclc_u64 parts, mscclc_u64 elemSize,
                                  mscclc_u64 *begin, mscclc_u64 *end) {
  const mscclc_u64 align = 16 / elemSize;
  const mscclc_u64 per = ((n + parts - 1) / parts + align - 1) / align * align;
  const mscclc_u64 b = per * index < n ? per * index : n;
  *begin = b;
  *end = b + per < n ? b + per : n;
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
