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
// The fp8 types (OCP e4m3 and e5m2, stored like __nv_fp8_e4m3 and
// __nv_fp8_e5m2) likewise reduce in f32 and convert back once, as
// cuda_fp8.h's saturating conversion does: round to nearest even, and a
// result past the largest finite value (448, 57344), infinity included,
// becomes that value; NaN stays NaN (0x7f). The conversions are written out
// here, the same on CUDA and HIP, so that neither cuda_fp8.h nor ROCm's fp8
// header is needed (ROCm 5.2 has none). The simulator rounds the same way
// (compiler/lib/Simulator/Arith.cpp).
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

/// OCP fp8 e4m3: bias 7, 3 mantissa bits, no infinities (S.1111.111 is NaN).
struct Fp8E4M3 {
  unsigned char bits;
};
/// OCP fp8 e5m2: bias 15, 2 mantissa bits, IEEE-like (the upper byte of an
/// IEEE binary16).
struct Fp8E5M2 {
  unsigned char bits;
};

__device__ __forceinline__ float toFloat(Fp8E5M2 f) {
  return halfToFloat(static_cast<unsigned short>(f.bits << 8));
}
__device__ __forceinline__ float toFloat(Fp8E4M3 f) {
  unsigned sign = static_cast<unsigned>(f.bits & 0x80u) << 24;
  unsigned exp = (f.bits >> 3) & 0xfu, mantissa = f.bits & 0x7u;
  if ((f.bits & 0x7fu) == 0x7fu)
    return __uint_as_float(0x7fffffffu);
  if (exp == 0) // zero or subnormal: mantissa * 2^-9, exact in f32
    return __uint_as_float(
        __float_as_uint(static_cast<float>(mantissa) * 0.001953125f) | sign);
  return __uint_as_float(sign | ((exp + 120u) << 23) | (mantissa << 20));
}

/// f32 -> fp8 with MANTISSA mantissa bits and exponent bias BIAS, rounded to
/// nearest even, saturating at MAX_BITS (the largest finite encoding).
template <unsigned MANTISSA, unsigned BIAS, unsigned MAX_BITS>
__device__ __forceinline__ unsigned char floatToFp8(float x) {
  unsigned u = __float_as_uint(x);
  unsigned char sign = static_cast<unsigned char>((u >> 24) & 0x80u);
  unsigned a = u & 0x7fffffffu;
  if (a > 0x7f800000u)
    return 0x7f; // NaN
  // The largest finite value, as f32 bits.
  constexpr unsigned maxF32 =
      ((((MAX_BITS >> MANTISSA) + 127u - BIAS) << MANTISSA) |
       (MAX_BITS & ((1u << MANTISSA) - 1u)))
      << (23u - MANTISSA);
  if (a >= maxF32) // everything above rounds to it or saturates
    return static_cast<unsigned char>(sign | MAX_BITS);
  constexpr unsigned minNormalF32 = (128u - BIAS) << 23;
  if (a < minNormalF32) {
    // Subnormal: a multiple of 2^(1 - BIAS - MANTISSA); scaling by a power
    // of two is exact, rintf rounds to nearest even. 2^MANTISSA (a carry
    // into the smallest normal) is that normal's encoding.
    float scaled = __uint_as_float(a) *
                   __uint_as_float((127u + BIAS - 1u + MANTISSA) << 23);
    return static_cast<unsigned char>(
        sign | static_cast<unsigned>(rintf(scaled)));
  }
  // Normal: round the f32 bits at the fp8 mantissa's last place (a carry
  // moves into the exponent), then rebias the exponent.
  constexpr unsigned shift = 23u - MANTISSA;
  unsigned rounded = a + ((1u << (shift - 1u)) - 1u) + ((a >> shift) & 1u);
  return static_cast<unsigned char>(
      sign | ((rounded >> shift) - ((127u - BIAS) << MANTISSA)));
}

__device__ __forceinline__ Fp8E4M3 toFp8E4M3(float f) {
  Fp8E4M3 r;
  r.bits = floatToFp8<3, 7, 0x7e>(f);
  return r;
}
__device__ __forceinline__ Fp8E5M2 toFp8E5M2(float f) {
  Fp8E5M2 r;
  r.bits = floatToFp8<2, 15, 0x7b>(f);
  return r;
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
typedef Fp8E4M3 dtype_f8e4m3;
typedef Fp8E5M2 dtype_f8e5m2;

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
    static __device__ __forceinline__ Fp8E4M3 apply(Fp8E4M3 fa, Fp8E4M3 fb) {  \
      float a = toFloat(fa), b = toFloat(fb);                                  \
      return toFp8E4M3(EXPR);                                                  \
    }                                                                          \
    static __device__ __forceinline__ Fp8E5M2 apply(Fp8E5M2 fa, Fp8E5M2 fb) {  \
      float a = toFloat(fa), b = toFloat(fb);                                  \
      return toFp8E5M2(EXPR);                                                  \
    }                                                                          \
  };
MSCCLC_DEFINE_OP(sum, a + b)
MSCCLC_DEFINE_OP(prod, a *b)
MSCCLC_DEFINE_OP(min, a < b ? a : b)
MSCCLC_DEFINE_OP(max, a < b ? b : a)
#undef MSCCLC_DEFINE_OP
/// avg runs as sum; the kernel then scales its result (kernel-abi.md).
typedef Op_sum Op_avg;

/// The kernel's element type and reduction operator.
typedef MSCCLC_CAT(dtype_, MSCCLC_DTYPE) T;
typedef MSCCLC_CAT(Op_, MSCCLC_REDOP) RedOp;

/// Multiplies an element by a factor (avg's scaling, Device.h).
template <class X> __device__ __forceinline__ X scale(X x, double f) {
  return static_cast<X>(static_cast<double>(x) * f);
}
template <> __device__ __forceinline__ Half scale(Half x, double f) {
  return toHalf(static_cast<float>(toFloat(x) * f));
}
template <> __device__ __forceinline__ BFloat16 scale(BFloat16 x, double f) {
  return toBFloat16(static_cast<float>(toFloat(x) * f));
}
template <> __device__ __forceinline__ Fp8E4M3 scale(Fp8E4M3 x, double f) {
  return toFp8E4M3(static_cast<float>(toFloat(x) * f));
}
template <> __device__ __forceinline__ Fp8E5M2 scale(Fp8E5M2 x, double f) {
  return toFp8E5M2(static_cast<float>(toFloat(x) * f));
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
