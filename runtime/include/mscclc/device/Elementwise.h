//===- Elementwise.h - The one data-movement loop behind every data op ---===//
//
// copy, reduce, put, get, read_reduce and reduce_put are all "read NS plain
// sources and NK LL packet sources, reduce them with RedOp, write the result
// to ND plain destinations and NL LL packet destinations", over n elements,
// by all threads of the block. Plain-only operations move 16-byte vectors
// (4 in flight per thread) when every pointer has the same alignment modulo
// 16, with element-wise head and tail; anything else falls back to elements.
// Operations touching packets move one step per thread and iteration: the
// data of one LLPacket (8 bytes in LL16, 4 in LL8), or of two LL8 packets
// for 8-byte elements, so an element never straddles steps; packet pointers
// must point at the packet holding the first element.
//
// Aligned loads go through the vendor's loadGlobal* (Vendor.h): data
// written by peers or by other blocks must never be served from a stale L1
// line.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_DEVICE_ELEMENTWISE_H
#define MSCCLC_DEVICE_ELEMENTWISE_H

#include "mscclc/device/Layout.h"
#include "mscclc/device/Packet.h"

namespace mscclc {
namespace dev {

/// The default source order: the plain sources, then the packet sources.
template <int NS, int NK> struct PlainSourcesFirst {
  static constexpr u64 value =
      NK >= 64 ? ~u64(0) << NS : ((u64(1) << NK) - 1) << NS;
};

/// The operands of one elementwise operation. Arrays have at least one
/// entry so that empty lists compile; only the first N* are used.
///
/// `Order` is the order in which the program lists the sources: bit i set
/// means source i is a packet source (the next of pin[]), clear means the
/// next of src[]. Sources are reduced left to right in that order, so that
/// ranks listing the same sources alike get the same bits whichever of
/// them arrive as packets.
template <int NS, int NK, int ND, int NL,
          u64 Order = PlainSourcesFirst<NS, NK>::value>
struct Operands {
  const T *src[NS > 0 ? NS : 1];
  const LLPacket *pin[NK > 0 ? NK : 1];
  T *dst[ND > 0 ? ND : 1];
  LLPacket *pout[NL > 0 ? NL : 1];
};

template <int S> struct BitsOf;
template <> struct BitsOf<1> { typedef unsigned char type; };
template <> struct BitsOf<2> { typedef unsigned short type; };
template <> struct BitsOf<4> { typedef unsigned type; };
template <> struct BitsOf<8> { typedef unsigned long long type; };

/// Element load that bypasses L1.
__device__ __forceinline__ T loadElem(const T *p) {
  typedef typename BitsOf<sizeof(T)>::type B;
  B raw = *reinterpret_cast<const volatile B *>(p);
  return *reinterpret_cast<T *>(&raw);
}
__device__ __forceinline__ void storeElem(T *p, T v) { *p = v; }

__device__ __forceinline__ uint4 loadVec(const void *p) {
  return loadGlobal16(p);
}
__device__ __forceinline__ void storeVec(void *p, uint4 v) {
  *reinterpret_cast<uint4 *>(p) = v;
}

/// The bytes one thread moves per step of a packet operation.
constexpr u32 kStepBytes = sizeof(T) > MSCCLC_LL_DATA_BYTES
                               ? sizeof(T)
                               : MSCCLC_LL_DATA_BYTES;
constexpr u32 kPacketsPerStep = kStepBytes / MSCCLC_LL_DATA_BYTES;
template <int S> struct StepOf;
template <> struct StepOf<4> { typedef unsigned type; };
template <> struct StepOf<8> { typedef uint2 type; };
typedef StepOf<kStepBytes>::type Step;

__device__ __forceinline__ void setZero(uint2 &v) { v = make_uint2(0, 0); }
__device__ __forceinline__ void setZero(unsigned &v) { v = 0; }
__device__ __forceinline__ void loadAligned(uint2 &v, const void *p) {
  v = loadGlobal8(p);
}
__device__ __forceinline__ void loadAligned(unsigned &v, const void *p) {
  v = loadGlobal4(p);
}

/// Loads `valid` (<= sizeof(V)) bytes starting at p; bytes past `valid`
/// are zero.
template <class V>
__device__ __forceinline__ V loadStep(const T *p, u32 valid) {
  V v;
  if (valid == sizeof(V) && (reinterpret_cast<u64>(p) % sizeof(V)) == 0) {
    loadAligned(v, p);
    return v;
  }
  setZero(v);
  T *lanes = reinterpret_cast<T *>(&v);
  for (u32 e = 0; e < valid / sizeof(T); ++e)
    lanes[e] = loadElem(p + e);
  return v;
}
template <class V>
__device__ __forceinline__ void storeStep(T *p, V v, u32 valid) {
  if (valid == sizeof(V) && (reinterpret_cast<u64>(p) % sizeof(V)) == 0) {
    *reinterpret_cast<V *>(p) = v;
    return;
  }
  const T *lanes = reinterpret_cast<const T *>(&v);
  for (u32 e = 0; e < valid / sizeof(T); ++e)
    storeElem(p + e, lanes[e]);
}

/// A step's packets: its own one, or two LL8 packets for an 8-byte element
/// (the low word first). P is always LLPacket; as a template parameter it
/// keeps the branch for the other packet count from being compiled.
template <class P, class V>
__device__ __forceinline__ bool tryReadStep(const P *p, u32 flag, V &v) {
  if constexpr (kPacketsPerStep == 1) {
    return tryReadLL(p, flag, v);
  } else {
    u32 lo, hi;
    const bool a = tryReadLL(p, flag, lo), b = tryReadLL(p + 1, flag, hi);
    v = make_uint2(lo, hi);
    return a && b;
  }
}
template <class V, class P>
__device__ __forceinline__ V readStep(const Ctx &ctx, const Site &site,
                                      const P *p, u32 flag) {
  if constexpr (kPacketsPerStep == 1) {
    return readLL(ctx, site, p, flag);
  } else {
    const u32 lo = readLL(ctx, site, p, flag);
    return make_uint2(lo, readLL(ctx, site, p + 1, flag));
  }
}
template <class P, class V>
__device__ __forceinline__ void storeStepPackets(P *p, V v, u32 flag) {
  if constexpr (kPacketsPerStep == 1) {
    storeLL(p, v, flag);
  } else {
    storeLL(p, v.x, flag);
    storeLL(p + 1, v.y, flag);
  }
}

/// Element-wise path over elements [begin, end).
template <int NS, int NK, int ND, int NL>
__device__ __forceinline__ void elementLoop(const Operands<NS, NK, ND, NL> &o,
                                            u64 begin, u64 end) {
  for (u64 i = begin + threadIdx.x; i < end; i += blockDim.x) {
    T v = loadElem(o.src[0] + i);
#pragma unroll
    for (int s = 1; s < NS; ++s)
      v = RedOp::apply(v, loadElem(o.src[s] + i));
#pragma unroll
    for (int d = 0; d < ND; ++d)
      storeElem(o.dst[d] + i, v);
  }
}

/// Plain sources and destinations only.
template <int NS, int ND>
__device__ MSCCLC_OP_INLINE void plainOp(const Operands<NS, 0, ND, 0> &o,
                                         u64 n) {
  static_assert(NS >= 1, "an operation needs a source");
  constexpr u64 perVec = 16 / sizeof(T);
  const u32 mis = static_cast<u32>(reinterpret_cast<u64>(o.src[0]) & 15);
  bool coAligned = true;
#pragma unroll
  for (int s = 1; s < NS; ++s)
    coAligned &= (reinterpret_cast<u64>(o.src[s]) & 15) == mis;
#pragma unroll
  for (int d = 0; d < ND; ++d)
    coAligned &= (reinterpret_cast<u64>(o.dst[d]) & 15) == mis;
  if (!coAligned) {
    elementLoop(o, 0, n);
    return;
  }
  const u64 head = umin(n, ((16 - mis) & 15) / sizeof(T));
  elementLoop(o, 0, head);
  const u64 nvec = (n - head) / perVec;
  const u64 tailBegin = head + nvec * perVec;
  elementLoop(o, tailBegin, n);

  constexpr int unroll = 4;
  const u64 stride = blockDim.x;
  u64 i = threadIdx.x;
  for (; i + (unroll - 1) * stride < nvec; i += unroll * stride) {
    uint4 v[unroll];
#pragma unroll
    for (int u = 0; u < unroll; ++u)
      v[u] = loadVec(o.src[0] + head + (i + u * stride) * perVec);
#pragma unroll
    for (int s = 1; s < NS; ++s) {
      uint4 w[unroll];
#pragma unroll
      for (int u = 0; u < unroll; ++u)
        w[u] = loadVec(o.src[s] + head + (i + u * stride) * perVec);
#pragma unroll
      for (int u = 0; u < unroll; ++u)
        v[u] = reduceLanes<T, RedOp>(v[u], w[u]);
    }
#pragma unroll
    for (int d = 0; d < ND; ++d)
#pragma unroll
      for (int u = 0; u < unroll; ++u)
        storeVec(o.dst[d] + head + (i + u * stride) * perVec, v[u]);
  }
  for (; i < nvec; i += stride) {
    uint4 v = loadVec(o.src[0] + head + i * perVec);
#pragma unroll
    for (int s = 1; s < NS; ++s)
      v = reduceLanes<T, RedOp>(v, loadVec(o.src[s] + head + i * perVec));
#pragma unroll
    for (int d = 0; d < ND; ++d)
      storeVec(o.dst[d] + head + i * perVec, v);
  }
}

/// Operations reading or writing LL packets: one step (kStepBytes) per
/// thread and iteration. Plain sources are loaded before the packets are
/// awaited, and every packet is read once before any is spun on, so the
/// loads overlap instead of costing one round trip each; then the sources
/// are reduced in the program's order (Operands' `Order`).
template <int NS, int NK, int ND, int NL, u64 Order>
__device__ MSCCLC_OP_INLINE void packetOp(const Ctx &ctx, const Site &site,
                                          const Operands<NS, NK, ND, NL, Order> &o,
                                          u64 n) {
  static_assert(NS + NK >= 1, "an operation needs a source");
  static_assert(NK == 0 || NS + NK <= 64, "Order has a bit per source");
  const u64 bytes = n * sizeof(T);
  // An empty operation still writes (or waits for) its first packet, with
  // the flag alone: so reading a chunk's packets always tells the reader
  // that the writer's kernel runs, at every count (docs/execution-model.md).
  const u64 steps = bytes == 0 ? 1 : (bytes + kStepBytes - 1) / kStepBytes;
  constexpr u64 perStep = kStepBytes / sizeof(T);
  for (u64 q = threadIdx.x; q < steps; q += blockDim.x) {
    const u32 valid =
        static_cast<u32>(umin(kStepBytes, bytes - q * kStepBytes));
    const u64 pq = q * kPacketsPerStep;
    Step plain[NS > 0 ? NS : 1];
#pragma unroll
    for (int s = 0; s < NS; ++s)
      plain[s] = loadStep<Step>(o.src[s] + q * perStep, valid);
    Step got[NK > 0 ? NK : 1];
    bool ready[NK > 0 ? NK : 1];
#pragma unroll
    for (int k = 0; k < NK; ++k)
      ready[k] = tryReadStep(o.pin[k] + pq, ctx.flag, got[k]);
#pragma unroll
    for (int k = 0; k < NK; ++k)
      if (!ready[k])
        got[k] = readStep<Step>(ctx, site, o.pin[k] + pq, ctx.flag);
    Step v;
    setZero(v);
    int s = 0, k = 0;
#pragma unroll
    for (int i = 0; i < NS + NK; ++i) {
      const Step x = (Order >> i) & 1 ? got[k++] : plain[s++];
      v = i == 0 ? x : reduceLanes<T, RedOp>(v, x);
    }
#pragma unroll
    for (int d = 0; d < ND; ++d)
      storeStep(o.dst[d] + q * perStep, v, valid);
#pragma unroll
    for (int l = 0; l < NL; ++l)
      storeStepPackets(o.pout[l] + pq, v, ctx.flag);
  }
}

/// Runs one elementwise operation over n elements with the whole block.
template <int NS, int NK, int ND, int NL, u64 Order>
__device__ __forceinline__ void elementwise(const Ctx &ctx, const Site &site,
                                            const Operands<NS, NK, ND, NL, Order> &o,
                                            u64 n) {
  if constexpr (NK == 0 && NL == 0)
    plainOp<NS, ND>(o, n);
  else
    packetOp(ctx, site, o, n);
}

/// A half-open element range.
struct Range {
  u64 begin, end;
  __device__ u64 size() const { return end - begin; }
  /// The end of a group block's walk over its runs (groupNext).
  __device__ bool done() const { return begin == MSCCLC_GROUP_NONE; }
};

/// The runs of `whole` that block `index` of a group of `parts` owns
/// (Layout.h: stripes of `stripe` elements, the same in every operation of
/// the group): the first, then each next one, until `done`.
__device__ __forceinline__ Range groupFirst(Range whole, u32 index, u32 parts,
                                            u64 stripe) {
  u64 b = 0, e = 0;
  mscclc_group_first(whole.begin, whole.end, index, parts, stripe, &b, &e);
  return Range{b, e};
}
__device__ __forceinline__ Range groupNext(Range whole, Range prev, u32 parts,
                                           u64 stripe) {
  u64 b = 0, e = 0;
  mscclc_group_next(prev.begin, prev.end, whole.end, parts, stripe, &b, &e);
  return Range{b, e};
}

/// Iteration t of a pipeline with `unit` elements per iteration, applied
/// to an operation of n elements.
__device__ __forceinline__ Range pipelineSlice(u64 n, u64 t, u64 unit) {
  return Range{umin(n, t * unit), umin(n, (t + 1) * unit)};
}

/// Elements per pipeline iteration for a unit of `bytes` (Layout.h).
__device__ __forceinline__ u64 pipelineUnitElems(u64 bytes) {
  return mscclc_pipeline_unit_elems(bytes, sizeof(T));
}

} // namespace dev
} // namespace mscclc

#endif // MSCCLC_DEVICE_ELEMENTWISE_H
