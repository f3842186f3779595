//===- Types.h - Element types and reduction operators for device code ---===//
//
// The element type and the reduction operator of a generated kernel are
// chosen when it is compiled: `-DMSCCLC_DTYPE=<id>` and
// `-DMSCCLC_REDOP=<op>` (docs/kernel-abi.md). 16-bit floats are plain
// 16-bit storage types converted through f32 by the vendor's instructions
// (mscclc/device/Vendor.h), so the headers need no CUDA or HIP library
// header (NVRTC compiles them as is). An operation on
// two 16-bit values done in f32 and rounded once is correctly rounded (f32
// has at least 2p+2 mantissa bits for p = 11 and p = 8).
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_DEVICE_TYPES_H
#define MSCCLC_DEVICE_TYPES_H

#include "mscclc/device/KernelArgs.h"
#include "mscclc/device/Vendor.h"

#ifndef MSCCLC_DTYPE
#define MSCCLC_DTYPE f32
#endif
#ifndef MSCCLC_REDOP
#define MSCCLC_REDOP sum
#endif

// The data loops and the spin loops are inlined into every operation by
// default, which is fastest. A kernel with many operations (many thread
// blocks) compiles several times faster with them out of line, called once
// per operation: generated code sets MSCCLC_OUTLINE_OPS for such programs.
#ifndef MSCCLC_OUTLINE_OPS
#define MSCCLC_OUTLINE_OPS 0
#endif
#if MSCCLC_OUTLINE_OPS
#define MSCCLC_OP_INLINE __noinline__
#else
#define MSCCLC_OP_INLINE __forceinline__
#endif

#define MSCCLC_CAT_(a, b) a##b
#define MSCCLC_CAT(a, b) MSCCLC_CAT_(a, b)

namespace mscclc {
namespace dev {

typedef mscclc_u32 u32;
typedef mscclc_u64 u64;
typedef long long i64;

/// IEEE binary16, as stored by `__half`.
struct Half {
  unsigned short bits;
};
/// bfloat16, as stored by `__nv_bfloat16`.
struct BFloat16 {
  unsigned short bits;
};

__device__ __forceinline__ float toFloat(Half h) { return halfToFloat(h.bits); }
__device__ __forceinline__ Half toHalf(float f) {
  Half h;
  h.bits = floatToHalf(f);
  return h;
}
__device__ __forceinline__ float toFloat(BFloat16 b) {
  return __uint_as_float(static_cast<unsigned>(b.bits) << 16);
}
__device__ __forceinline__ BFloat16 toBFloat16(float f) {
  // Round to nearest even; NaNs stay NaN (quiet bit kept).
  unsigned u = __float_as_uint(f);
  BFloat16 b;
  if ((u & 0x7fffffffu) > 0x7f800000u) {
    b.bits = static_cast<unsigned short>((u >> 16) | 0x40u);
    return b;
  }
  u += 0x7fffu + ((u >> 16) & 1u);
  b.bits = static_cast<unsigned short>(u >> 16);
  return b;
}

/// Element type ids accepted by MSCCLC_DTYPE.
typedef float dtype_f32;
typedef Half dtype_f16;
typedef BFloat16 dtype_bf16;
typedef double dtype_f64;
typedef int dtype_i32;
typedef unsigned dtype_u32;
typedef long long dtype_i64;
typedef unsigned long long dtype_u64;
typedef signed char dtype_i8;
typedef unsigned char dtype_u8;

/// Reduction operators accepted by MSCCLC_REDOP. Each has `apply` for every
/// element type; 16-bit floats go through f32.
#define MSCCLC_DEFINE_OP(NAME, EXPR)                                           \
  struct Op_##NAME {                                                           \
    template <class X> static __device__ __forceinline__ X apply(X a, X b) {   \
      return static_cast<X>(EXPR);                                             \
    }                                                                          \
    static __device__ __forceinline__ Half apply(Half ha, Half hb) {           \
      float a = toFloat(ha), b = toFloat(hb);                                  \
      return toHalf(EXPR);                                                     \
    }                                                                          \
    static __device__ __forceinline__ BFloat16 apply(BFloat16 ba,              \
                                                     BFloat16 bb) {            \
      float a = toFloat(ba), b = toFloat(bb);                                  \
      return toBFloat16(EXPR);                                                 \
    }                                                                          \
  };
MSCCLC_DEFINE_OP(sum, a + b)
MSCCLC_DEFINE_OP(prod, a *b)
MSCCLC_DEFINE_OP(min, a < b ? a : b)
MSCCLC_DEFINE_OP(max, a < b ? b : a)
#undef MSCCLC_DEFINE_OP
/// avg runs as sum; the host scales the output afterwards (kernel-abi.md).
typedef Op_sum Op_avg;

/// The kernel's element type and reduction operator.
typedef MSCCLC_CAT(dtype_, MSCCLC_DTYPE) T;
typedef MSCCLC_CAT(Op_, MSCCLC_REDOP) RedOp;

/// Multiplies an element by a factor (used by the avg scale kernel).
template <class X> __device__ __forceinline__ X scale(X x, double f) {
  return static_cast<X>(static_cast<double>(x) * f);
}
template <> __device__ __forceinline__ Half scale(Half x, double f) {
  return toHalf(static_cast<float>(toFloat(x) * f));
}
template <> __device__ __forceinline__ BFloat16 scale(BFloat16 x, double f) {
  return toBFloat16(static_cast<float>(toFloat(x) * f));
}

/// Lane-wise reduction of two registers holding sizeof(V)/sizeof(X) elements.
template <class X, class Op, class V>
__device__ __forceinline__ V reduceLanes(V a, V b) {
  constexpr int lanes = sizeof(V) / sizeof(X);
  X *pa = reinterpret_cast<X *>(&a);
  const X *pb = reinterpret_cast<const X *>(&b);
#pragma unroll
  for (int i = 0; i < lanes; ++i)
    pa[i] = Op::apply(pa[i], pb[i]);
  return a;
}

template <class A, class B> struct IsSame {
  static constexpr bool value = false;
};
template <class A> struct IsSame<A, A> {
  static constexpr bool value = true;
};

__device__ __forceinline__ u64 umin(u64 a, u64 b) { return a < b ? a : b; }
__device__ __forceinline__ u64 umax(u64 a, u64 b) { return a < b ? b : a; }

} // namespace dev
} // namespace mscclc

#endif // MSCCLC_DEVICE_TYPES_H
