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

/// Thread-block groups. Every operation of a group of `parts` blocks is
/// split the same way: position p of a chunk (counted from the chunk's
/// first element) belongs to block (p / stripe) % parts, whatever the
/// operation and however many elements it moves. So a block only ever
/// reads what it wrote itself, or what a signal or an LL packet ordered
/// before it, and the group behaves as `parts` copies of one block on
/// disjoint parts of every chunk (docs/execution-model.md).
///
/// The stripe is a multiple of 16 bytes, so every part keeps the vector
/// alignment and the LL packet and step boundaries of the whole: the
/// largest chunk (`chunkElems`, a scratch chunk) cut in `parts`, or, when
/// the group runs pipelines, one iteration's unit (`unitElems`, 0 when
/// there is none) cut in `parts`, so that every iteration keeps every
/// block busy.
MSCCLC_HD mscclc_u64 mscclc_group_stripe(mscclc_u64 chunkElems,
                                         mscclc_u64 unitElems,
                                         mscclc_u64 parts,
                                         mscclc_u64 elemSize) {
  const mscclc_u64 align = 16 / elemSize;
  const mscclc_u64 whole =
      unitElems != 0 && unitElems < chunkElems ? unitElems : chunkElems;
  const mscclc_u64 per = ((whole + parts - 1) / parts + align - 1) / align;
  return (per == 0 ? 1 : per) * align;
}

/// No run: the end of a block's walk over its runs.
#define MSCCLC_GROUP_NONE (~0ull)

/// The first run of [whole_begin, whole_end) that block `index` of a group
/// owns (mscclc_group_stripe), in [*begin, *end_); *begin ==
/// MSCCLC_GROUP_NONE when it owns none. An empty range belongs to the
/// owner of its position, who does the operation on it once: an operation
/// on LL packets still writes (or waits for) the first packet there.
MSCCLC_HD void mscclc_group_first(mscclc_u64 whole_begin, mscclc_u64 whole_end,
                                  mscclc_u64 index, mscclc_u64 parts,
                                  mscclc_u64 stripe, mscclc_u64 *begin,
                                  mscclc_u64 *end_) {
  const mscclc_u64 k = whole_begin / stripe;
  const mscclc_u64 owner = k % parts;
  *begin = *end_ = MSCCLC_GROUP_NONE;
  if (whole_begin >= whole_end) {
    if (owner == index)
      *begin = *end_ = whole_begin;
    return;
  }
  const mscclc_u64 mine = k + (index + parts - owner) % parts;
  const mscclc_u64 b = mine == k ? whole_begin : mine * stripe;
  if (b >= whole_end)
    return;
  const mscclc_u64 e = (mine + 1) * stripe;
  *begin = b;
  *end_ = e < whole_end ? e : whole_end;
}

/// The run block `index` owns after [prev_begin, prev_end), one of its runs
/// of [.., whole_end): the same stripe `parts` stripes on, clipped, or
/// MSCCLC_GROUP_NONE.
MSCCLC_HD void mscclc_group_next(mscclc_u64 prev_begin, mscclc_u64 prev_end,
                                 mscclc_u64 whole_end, mscclc_u64 parts,
                                 mscclc_u64 stripe, mscclc_u64 *begin,
                                 mscclc_u64 *end_) {
  *begin = *end_ = MSCCLC_GROUP_NONE;
  if (prev_begin >= prev_end)
    return; // an empty range is done once
  const mscclc_u64 b = (prev_begin / stripe + parts) * stripe;
  if (b >= whole_end)
    return;
  const mscclc_u64 e = b + stripe;
  *begin = b;
  *end_ = e < whole_end ? e : whole_end;
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
