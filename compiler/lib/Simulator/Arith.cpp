//===- Arith.cpp - Element arithmetic in the simulated data types --------===//

#include "Arith.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace mscclc::sim;

std::optional<DataType> mscclc::sim::parseDataType(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<DataType>>(name.lower())
      .Cases({"f32", "float", "float32"}, DataType::f32)
      .Cases({"f16", "half", "float16"}, DataType::f16)
      .Cases({"bf16", "bfloat16"}, DataType::bf16)
      .Cases({"f64", "double", "float64"}, DataType::f64)
      .Cases({"i8", "int8"}, DataType::i8)
      .Cases({"u8", "uint8"}, DataType::u8)
      .Cases({"i32", "int32", "int"}, DataType::i32)
      .Cases({"u32", "uint32"}, DataType::u32)
      .Cases({"i64", "int64"}, DataType::i64)
      .Cases({"u64", "uint64"}, DataType::u64)
      .Default(std::nullopt);
}

std::optional<ReduceKind> mscclc::sim::parseReduceKind(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<ReduceKind>>(name.lower())
      .Case("sum", ReduceKind::sum)
      .Case("prod", ReduceKind::prod)
      .Case("min", ReduceKind::min)
      .Case("max", ReduceKind::max)
      .Case("avg", ReduceKind::avg)
      .Default(std::nullopt);
}

llvm::StringRef mscclc::sim::stringify(DataType type) {
  static const char *names[] = {"f32", "f16", "bf16", "f64", "i8",
                                "u8",  "i32", "u32",  "i64", "u64"};
  return names[static_cast<int>(type)];
}

llvm::StringRef mscclc::sim::stringify(ReduceKind kind) {
  static const char *names[] = {"sum", "prod", "min", "max", "avg"};
  return names[static_cast<int>(kind)];
}

int64_t mscclc::sim::byteSize(DataType type) {
  switch (type) {
  case DataType::f16:
  case DataType::bf16:
    return 2;
  case DataType::i8:
  case DataType::u8:
    return 1;
  case DataType::f64:
  case DataType::i64:
  case DataType::u64:
    return 8;
  default:
    return 4;
  }
}

bool mscclc::sim::isFloat(DataType type) {
  return type == DataType::f32 || type == DataType::f16 ||
         type == DataType::bf16 || type == DataType::f64;
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
  default:
    return 0;
  }
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
