//===- Arith.cpp - Element arithmetic in the simulated data types --------===//

#include "Arith.h"

#include "mscclc/floor/Tables.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace mscclc::sim;

// The simulator's enums are the floor's tables (mscclc/floor/*.def).
#define MSCCLC_DATA_TYPE(Id, name, ...)                                        \
  static_assert(static_cast<int>(DataType::name) ==                            \
                static_cast<int>(mscclc::DataType::Id));
#include "mscclc/floor/DataTypes.def"
static_assert(static_cast<int>(ReduceKind::sum) ==
              static_cast<int>(mscclc::RedOp::Sum));
static_assert(static_cast<int>(ReduceKind::prod) ==
              static_cast<int>(mscclc::RedOp::Prod));
static_assert(static_cast<int>(ReduceKind::min) ==
              static_cast<int>(mscclc::RedOp::Min));
static_assert(static_cast<int>(ReduceKind::max) ==
              static_cast<int>(mscclc::RedOp::Max));
static_assert(static_cast<int>(ReduceKind::avg) ==
              static_cast<int>(mscclc::RedOp::Avg));

std::optional<DataType> mscclc::sim::parseDataType(llvm::StringRef name) {
  std::string lower = name.lower();
  // The floor's names and NCCL's ("f32", "float32"), then C's and short
  // fp8 spellings.
  for (const DataTypeInfo &t : kDataTypes)
    if (lower == t.name || lower == t.ncclName)
      return static_cast<DataType>(t.id);
  return llvm::StringSwitch<std::optional<DataType>>(lower)
      .Case("float", DataType::f32)
      .Case("half", DataType::f16)
      .Case("double", DataType::f64)
      .Case("int", DataType::i32)
      .Case("e4m3", DataType::f8e4m3)
      .Case("e5m2", DataType::f8e5m2)
      .Default(std::nullopt);
}

std::optional<ReduceKind> mscclc::sim::parseReduceKind(llvm::StringRef name) {
  std::optional<RedOp> op = lookupRedOp(name.lower());
  if (!op || *op == RedOp::PreMulSum)
    return std::nullopt;
  return static_cast<ReduceKind>(*op);
}

llvm::StringRef mscclc::sim::stringify(DataType type) {
  return dataTypeName(static_cast<mscclc::DataType>(type));
}

llvm::StringRef mscclc::sim::stringify(ReduceKind kind) {
  return redOpName(static_cast<RedOp>(kind));
}

std::string mscclc::sim::acceptedDataTypes() {
  std::string names;
  for (int t = 0; t <= static_cast<int>(DataType::f8e5m2); ++t)
    names += (t ? ", " : "") + stringify(static_cast<DataType>(t)).str();
  return names;
}

std::string mscclc::sim::acceptedReduceKinds() {
  std::string names;
  for (int k = 0; k <= static_cast<int>(ReduceKind::avg); ++k)
    names += (k ? ", " : "") + stringify(static_cast<ReduceKind>(k)).str();
  return names;
}

int64_t mscclc::sim::byteSize(DataType type) {
  return static_cast<int64_t>(
      dataTypeSize(static_cast<mscclc::DataType>(type)));
}

bool mscclc::sim::isFloat(DataType type) {
  return type == DataType::f32 || type == DataType::f16 ||
         type == DataType::bf16 || type == DataType::f64 ||
         type == DataType::f8e4m3 || type == DataType::f8e5m2;
}

double mscclc::sim::unitRoundoff(DataType type) {
  switch (type) {
  case DataType::f32:
    return std::ldexp(1.0, -24);
  case DataType::f16:
    return std::ldexp(1.0, -11);
  case DataType::bf16:
    return std::ldexp(1.0, -8);
  case DataType::f64:
    return std::ldexp(1.0, -53);
  case DataType::f8e4m3:
    return std::ldexp(1.0, -4);
  case DataType::f8e5m2:
    return std::ldexp(1.0, -3);
  default:
    return 0;
  }
}

double mscclc::sim::subnormalSpacing(DataType type) {
  switch (type) {
  case DataType::f32:
    return std::ldexp(1.0, -149);
  case DataType::f16:
    return std::ldexp(1.0, -24);
  case DataType::bf16:
    return std::ldexp(1.0, -133);
  case DataType::f64:
    return std::ldexp(1.0, -1074);
  case DataType::f8e4m3:
    return std::ldexp(1.0, -9);
  case DataType::f8e5m2:
    return std::ldexp(1.0, -16);
  default:
    return 0;
  }
}

namespace {
/// One fp8 format: OCP e4m3 (no infinities; S.1111.111 is NaN, so the
/// largest finite value is 448) or e5m2 (IEEE-like: infinities and NaNs at
/// exponent 31, largest finite 57344).
struct Fp8Format {
  int mantissaBits, bias;
  double maxFinite;
  bool hasInfinity;
};
} // namespace

static Fp8Format fp8Format(DataType type) {
  if (type == DataType::f8e4m3)
    return {3, 7, 448.0, false};
  return {2, 15, 57344.0, true};
}

/// Rounds to the fp8 format as CUDA's float -> fp8 conversion with
/// __NV_SATFINITE does (the one __nv_fp8_e4m3(float) and the device
/// library use): to nearest even, subnormals included; a magnitude that
/// rounds past the largest finite value, infinity included, saturates to
/// it; NaN stays NaN.
static double roundFp8(DataType type, double value) {
  if (std::isnan(value))
    return value;
  Fp8Format f = fp8Format(type);
  double a = std::fabs(value);
  // The spacing of the values around a: 2^(e - mantissaBits) for a in
  // [2^e, 2^(e+1)), fixed at the subnormal spacing below the smallest
  // normal 2^(1 - bias).
  int exp = 0;
  if (std::isfinite(a))
    std::frexp(a, &exp); // a = m * 2^exp, m in [0.5, 1)
  int e = std::max(exp - 1, 1 - f.bias);
  double q = a;
  if (std::isfinite(a)) {
    double ulp = std::ldexp(1.0, e - f.mantissaBits);
    q = std::nearbyint(a / ulp) * ulp; // default rounding mode: to even
  }
  if (q > f.maxFinite)
    q = f.maxFinite;
  return std::copysign(q, value);
}

uint8_t mscclc::sim::fp8Bits(DataType type, double value) {
  Fp8Format f = fp8Format(type);
  if (std::isnan(value))
    return 0x7f; // CUDA's canonical NaN for both formats
  double r = roundFp8(type, value);
  uint8_t sign = std::signbit(r) ? 0x80 : 0;
  double a = std::fabs(r);
  if (a == 0)
    return sign;
  int exp;
  std::frexp(a, &exp);
  int biased = exp - 1 + f.bias;
  if (biased < 1) // subnormal: a multiple of the subnormal spacing
    return sign | static_cast<uint8_t>(
                      a / std::ldexp(1.0, 1 - f.bias - f.mantissaBits));
  double mantissa = a / std::ldexp(1.0, exp - 1) - 1; // in [0, 1)
  return sign | static_cast<uint8_t>(biased << f.mantissaBits) |
         static_cast<uint8_t>(std::ldexp(mantissa, f.mantissaBits));
}

double mscclc::sim::fp8Value(DataType type, uint8_t bits) {
  Fp8Format f = fp8Format(type);
  int expField = (bits & 0x7f) >> f.mantissaBits;
  int mantissa = bits & ((1 << f.mantissaBits) - 1);
  double sign = bits & 0x80 ? -1.0 : 1.0;
  int maxExp = (1 << (7 - f.mantissaBits)) - 1;
  if (f.hasInfinity && expField == maxExp)
    return mantissa ? NAN : sign * INFINITY;
  if (!f.hasInfinity && (bits & 0x7f) == 0x7f)
    return NAN;
  if (expField == 0)
    return sign * std::ldexp(mantissa, 1 - f.bias - f.mantissaBits);
  return sign * std::ldexp(1.0 + std::ldexp(mantissa, -f.mantissaBits),
                           expField - f.bias);
}

static uint32_t floatBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}

static float bitsFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// Rounds a float to bfloat16 (upper 16 bits), to nearest even.
static float roundBF16(float f) {
  if (std::isnan(f))
    return f;
  uint32_t bits = floatBits(f);
  bits += 0x7fff + ((bits >> 16) & 1);
  return bitsFloat(bits & 0xffff0000u);
}

/// Rounds a float to IEEE half precision (to nearest even), including
/// subnormals and overflow to infinity.
static float roundF16(float f) {
  if (std::isnan(f) || std::isinf(f))
    return f;
  float a = std::fabs(f);
  if (a >= 65520.0f)
    return std::copysign(INFINITY, f);
  // Below 2^-14 the spacing is fixed at 2^-24.
  int exp;
  std::frexp(a, &exp); // a = m * 2^exp, m in [0.5, 1)
  int e = std::max(exp - 1, -14);
  float ulp = std::ldexp(1.0f, e - 10);
  float q = std::nearbyint(a / ulp) * ulp; // default rounding: to even
  return std::copysign(q, f);
}

double mscclc::sim::roundTo(DataType type, double value) {
  switch (type) {
  case DataType::f32:
    return static_cast<float>(value);
  case DataType::f16:
    return roundF16(static_cast<float>(value));
  case DataType::bf16:
    return roundBF16(static_cast<float>(value));
  case DataType::f8e4m3:
  case DataType::f8e5m2:
    // The device computes in f32 and converts the f32 result.
    return roundFp8(type, static_cast<float>(value));
  default:
    return value;
  }
}

Word mscclc::sim::wrapInt(DataType type, Word bits) {
  switch (type) {
  case DataType::i8:
    return static_cast<Word>(static_cast<int64_t>(static_cast<int8_t>(bits)));
  case DataType::u8:
    return bits & 0xff;
  case DataType::i32:
    return static_cast<Word>(static_cast<int64_t>(static_cast<int32_t>(bits)));
  case DataType::u32:
    return bits & 0xffffffffu;
  default:
    return bits;
  }
}

Word mscclc::sim::fromDouble(double value) {
  Word word;
  std::memcpy(&word, &value, 8);
  return word;
}

double mscclc::sim::toDouble(Word word) {
  double value;
  std::memcpy(&value, &word, 8);
  return value;
}

static bool isSigned(DataType type) {
  return type == DataType::i8 || type == DataType::i32 ||
         type == DataType::i64;
}

template <typename Fn>
static void floatLoop(DataType type, Word *acc, const Word *src, int64_t n,
                      Fn fn) {
  for (int64_t i = 0; i < n; ++i)
    acc[i] = fromDouble(roundTo(type, fn(toDouble(acc[i]), toDouble(src[i]))));
}

template <typename Fn>
static void intLoop(DataType type, Word *acc, const Word *src, int64_t n,
                    Fn fn) {
  for (int64_t i = 0; i < n; ++i)
    acc[i] = wrapInt(type, fn(acc[i], src[i]));
}

void mscclc::sim::reduceInto(DataType type, ReduceKind kind, Word *acc,
                             const Word *src, int64_t n) {
  if (isFloat(type)) {
    switch (kind) {
    case ReduceKind::sum:
    case ReduceKind::avg:
      if (type == DataType::f32) { // the common case, kept tight
        for (int64_t i = 0; i < n; ++i)
          acc[i] = fromDouble(
              static_cast<float>(toDouble(acc[i]) + toDouble(src[i])));
        return;
      }
      return floatLoop(type, acc, src, n, [](double a, double b) { return a + b; });
    case ReduceKind::prod:
      return floatLoop(type, acc, src, n, [](double a, double b) { return a * b; });
    case ReduceKind::min:
      return floatLoop(type, acc, src, n,
                       [](double a, double b) { return std::fmin(a, b); });
    case ReduceKind::max:
      return floatLoop(type, acc, src, n,
                       [](double a, double b) { return std::fmax(a, b); });
    }
  }
  bool sign = isSigned(type);
  switch (kind) {
  case ReduceKind::sum:
  case ReduceKind::avg:
    return intLoop(type, acc, src, n, [](Word a, Word b) { return a + b; });
  case ReduceKind::prod:
    return intLoop(type, acc, src, n, [](Word a, Word b) { return a * b; });
  case ReduceKind::min:
    return intLoop(type, acc, src, n, [sign](Word a, Word b) {
      return sign ? (static_cast<int64_t>(a) < static_cast<int64_t>(b) ? a : b)
                  : std::min(a, b);
    });
  case ReduceKind::max:
    return intLoop(type, acc, src, n, [sign](Word a, Word b) {
      return sign ? (static_cast<int64_t>(a) > static_cast<int64_t>(b) ? a : b)
                  : std::max(a, b);
    });
  }
}

void mscclc::sim::divideBy(DataType type, Word *data, int64_t n,
                           int64_t divisor) {
  for (int64_t i = 0; i < n; ++i) {
    if (isFloat(type))
      data[i] = fromDouble(roundTo(type, toDouble(data[i]) / divisor));
    else if (isSigned(type))
      data[i] = wrapInt(type, static_cast<Word>(
                                  static_cast<int64_t>(data[i]) / divisor));
    else
      data[i] = wrapInt(type, data[i] / static_cast<Word>(divisor));
  }
}

std::string mscclc::sim::formatWord(DataType type, Word word) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (isFloat(type))
    os << llvm::format("%.9g", toDouble(word));
  else if (isSigned(type))
    os << static_cast<int64_t>(word);
  else
    os << word;
  return text;
}
