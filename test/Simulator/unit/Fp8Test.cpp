//===- Fp8Test.cpp - The simulator's fp8 rounding against known values ---===//
//
// The simulator must round to fp8 exactly as the device does (f32 result,
// then CUDA's saturating conversion). Checked against hand-derived values at
// every boundary (ties to even, subnormals, saturation, NaN, signed zero),
// and, where the CUDA headers are present, against cuda_fp8.h's own host
// conversion for every fp8 value, every midpoint between neighbours and
// their f32 neighbours, and a million random f32 values.
//
//===----------------------------------------------------------------------===//

#include "Arith.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#ifdef MSCCLC_HAVE_CUDA_FP8
#include <cuda_fp8.h>
#endif

using namespace mscclc::sim;

namespace {

constexpr DataType E4M3 = DataType::f8e4m3;
constexpr DataType E5M2 = DataType::f8e5m2;

uint8_t bitsOf(DataType t, double v) { return fp8Bits(t, roundTo(t, v)); }

TEST(Fp8, E4M3KnownValues) {
  EXPECT_EQ(bitsOf(E4M3, 0.0), 0x00);
  EXPECT_EQ(bitsOf(E4M3, -0.0), 0x80);
  EXPECT_EQ(bitsOf(E4M3, 1.0), 0x38);
  EXPECT_EQ(bitsOf(E4M3, -2.0), 0xc0);
  EXPECT_EQ(bitsOf(E4M3, 1.125), 0x39);
  // Ties to even: 1.0625 lies between 1.0 (even) and 1.125.
  EXPECT_EQ(bitsOf(E4M3, 1.0625), 0x38);
  EXPECT_EQ(bitsOf(E4M3, 1.1875), 0x3a); // between 1.125 and 1.25 (even)
  EXPECT_EQ(bitsOf(E4M3, 1.0626), 0x39); // just above the tie
  EXPECT_EQ(bitsOf(E4M3, 17.0), 0x58); // tie: 16 (even), not 18
  EXPECT_EQ(bitsOf(E4M3, 15.5), 0x58); // rounds up into 16's binade
  // Largest finite 448 = 1.75 * 2^8: 0x7e; 0x7f is NaN.
  EXPECT_EQ(bitsOf(E4M3, 448.0), 0x7e);
  EXPECT_EQ(bitsOf(E4M3, 464.0), 0x7e); // tie with 480, 448 is even
  EXPECT_EQ(bitsOf(E4M3, 465.0), 0x7e); // saturates
  EXPECT_EQ(bitsOf(E4M3, 1e30), 0x7e);
  EXPECT_EQ(bitsOf(E4M3, INFINITY), 0x7e);
  EXPECT_EQ(bitsOf(E4M3, -INFINITY), 0xfe);
  EXPECT_EQ(bitsOf(E4M3, NAN), 0x7f);
  // Subnormals: multiples of 2^-9 below 2^-6.
  EXPECT_EQ(bitsOf(E4M3, std::ldexp(1.0, -6)), 0x08);
  EXPECT_EQ(bitsOf(E4M3, std::ldexp(1.0, -9)), 0x01);
  EXPECT_EQ(bitsOf(E4M3, std::ldexp(7.0, -9)), 0x07);
  EXPECT_EQ(bitsOf(E4M3, std::ldexp(7.5, -9)), 0x08); // carries into normal
  EXPECT_EQ(bitsOf(E4M3, std::ldexp(1.0, -10)), 0x00); // tie to 0 (even)
  EXPECT_EQ(bitsOf(E4M3, -std::ldexp(1.0, -10)), 0x80);
  EXPECT_EQ(bitsOf(E4M3, std::ldexp(1.5, -10)), 0x01);
  EXPECT_EQ(bitsOf(E4M3, std::ldexp(3.0, -10)), 0x02); // 1.5 ulp: to even 2
}

TEST(Fp8, E5M2KnownValues) {
  EXPECT_EQ(bitsOf(E5M2, 1.0), 0x3c);
  EXPECT_EQ(bitsOf(E5M2, -1.5), 0xbe);
  EXPECT_EQ(bitsOf(E5M2, 1.125), 0x3c); // tie: 1.0 is even
  EXPECT_EQ(bitsOf(E5M2, 1.375), 0x3e); // tie: 1.5 is even
  // Largest finite 57344 = 1.75 * 2^15: 0x7b; 0x7c is infinity.
  EXPECT_EQ(bitsOf(E5M2, 57344.0), 0x7b);
  EXPECT_EQ(bitsOf(E5M2, 61439.0), 0x7b);
  EXPECT_EQ(bitsOf(E5M2, 61440.0), 0x7b); // would tie to inf: saturates
  EXPECT_EQ(bitsOf(E5M2, INFINITY), 0x7b);
  EXPECT_EQ(bitsOf(E5M2, -INFINITY), 0xfb);
  EXPECT_EQ(bitsOf(E5M2, NAN), 0x7f);
  EXPECT_EQ(bitsOf(E5M2, std::ldexp(1.0, -14)), 0x04);
  EXPECT_EQ(bitsOf(E5M2, std::ldexp(1.0, -16)), 0x01);
  EXPECT_EQ(bitsOf(E5M2, std::ldexp(1.0, -17)), 0x00); // tie to 0
  EXPECT_EQ(bitsOf(E5M2, std::ldexp(3.0, -17)), 0x02); // tie to even 2
}

TEST(Fp8, DecodesEveryEncoding) {
  EXPECT_EQ(fp8Value(E4M3, 0x7e), 448.0);
  EXPECT_EQ(fp8Value(E4M3, 0x01), std::ldexp(1.0, -9));
  EXPECT_TRUE(std::isnan(fp8Value(E4M3, 0x7f)));
  EXPECT_TRUE(std::isnan(fp8Value(E4M3, 0xff)));
  EXPECT_EQ(fp8Value(E4M3, 0x78), 256.0); // e4m3 has no infinity
  EXPECT_EQ(fp8Value(E5M2, 0x7c), INFINITY);
  EXPECT_EQ(fp8Value(E5M2, 0xfc), -INFINITY);
  EXPECT_TRUE(std::isnan(fp8Value(E5M2, 0x7d)));
  EXPECT_EQ(fp8Value(E5M2, 0x7b), 57344.0);
  // Every finite value encodes back to its bits (signed zeros included).
  for (DataType t : {E4M3, E5M2})
    for (int b = 0; b < 256; ++b) {
      double v = fp8Value(t, uint8_t(b));
      if (!std::isfinite(v))
        continue;
      EXPECT_EQ(roundTo(t, v), v) << b;
      EXPECT_EQ(fp8Bits(t, v), b) << b;
    }
}

TEST(Fp8, ReductionsRoundTheF32Result) {
  // 448 + 448 saturates; 1 + 2^-4 ties back to 1.
  Word acc[2] = {fromDouble(448.0), fromDouble(1.0)};
  Word src[2] = {fromDouble(448.0), fromDouble(0.0625)};
  reduceInto(E4M3, ReduceKind::sum, acc, src, 2);
  EXPECT_EQ(toDouble(acc[0]), 448.0);
  EXPECT_EQ(toDouble(acc[1]), 1.0);
  Word p[1] = {fromDouble(-3.0)}, q[1] = {fromDouble(0.75)};
  reduceInto(E5M2, ReduceKind::prod, p, q, 1); // -2.25 ties to -2
  EXPECT_EQ(toDouble(p[0]), -2.0);
}

#ifdef MSCCLC_HAVE_CUDA_FP8
__nv_fp8_interpretation_t kind(DataType t) {
  return t == E4M3 ? __NV_E4M3 : __NV_E5M2;
}

void expectSameAsCuda(DataType t, float x) {
  unsigned cuda = __nv_cvt_float_to_fp8(x, __NV_SATFINITE, kind(t));
  ASSERT_EQ(bitsOf(t, x), cuda) << "x = " << x << " (" << std::hexfloat << x
                                << ")";
}

TEST(Fp8, MatchesCudaHeaderEverywhereThatMatters) {
  for (DataType t : {E4M3, E5M2}) {
    std::vector<double> values;
    for (int b = 0; b < 256; ++b)
      if (std::isfinite(fp8Value(t, uint8_t(b))))
        values.push_back(fp8Value(t, uint8_t(b)));
    std::sort(values.begin(), values.end());
    for (size_t i = 0; i < values.size(); ++i) {
      std::vector<double> probes = {values[i]};
      if (i + 1 < values.size())
        probes.push_back((values[i] + values[i + 1]) / 2); // the tie
      for (double v : probes) {
        float f = static_cast<float>(v);
        expectSameAsCuda(t, f);
        expectSameAsCuda(t, std::nextafter(f, INFINITY));
        expectSameAsCuda(t, std::nextafter(f, -INFINITY));
      }
    }
    for (float x : {INFINITY, -INFINITY, 1e38f, -1e38f, 61440.0f, 480.0f,
                    1e-40f, -1e-40f})
      expectSameAsCuda(t, x);
    std::mt19937 gen(7);
    for (int i = 0; i < 1000000; ++i) {
      uint32_t bits = gen();
      float x;
      std::memcpy(&x, &bits, 4);
      if (std::isnan(x)) {
        EXPECT_EQ(fp8Bits(t, roundTo(t, x)), 0x7f);
        continue;
      }
      // Mostly values in the fp8 range: scale the exponent down.
      int e;
      float y = std::ldexp(std::frexp(x, &e), int(gen() % 48) - 24);
      expectSameAsCuda(t, x);
      expectSameAsCuda(t, y);
    }
  }
}
#endif

} // namespace
