//===- DType.cpp - Element types as the harness sees them ----------------===//

#include "DType.h"
#include "KernelUnit.h"

#include <fmt/format.h>

#include <cstring>

namespace hostrun {

const DType *findDType(const std::string &name) {
  static const DType types[] = {
      {"f32", 4, Kind::Float, 0x1p-24},   {"f64", 8, Kind::Float, 0x1p-53},
      {"f16", 2, Kind::Float, 0x1p-11},   {"bf16", 2, Kind::Float, 0x1p-8},
      {"f8e4m3", 1, Kind::Float, 0x1p-4}, {"f8e5m2", 1, Kind::Float, 0x1p-3},
      {"i8", 1, Kind::Signed, 0},         {"u8", 1, Kind::Unsigned, 0},
      {"i32", 4, Kind::Signed, 0},        {"u32", 4, Kind::Unsigned, 0},
      {"i64", 8, Kind::Signed, 0},        {"u64", 8, Kind::Unsigned, 0},
  };
  for (const DType &t : types)
    if (name == t.name)
      return &t;
  return nullptr;
}

uint64_t elementBits(const unsigned char *p, unsigned size) {
  uint64_t v = 0;
  std::memcpy(&v, p, size); // little-endian hosts
  return v;
}

std::string formatElement(const DType &t, const unsigned char *p) {
  const uint64_t bits = elementBits(p, t.size);
  switch (t.kind) {
  case Kind::Unsigned:
    return fmt::format("{}", bits);
  case Kind::Signed: {
    const unsigned shift = 64 - 8 * t.size;
    return fmt::format("{}", static_cast<int64_t>(bits << shift) >> shift);
  }
  case Kind::Float:
    return fmt::format("{:.9g} (0x{:0{}x})", mscclc_hostrun_to_double(p), bits,
                       2 * t.size);
  }
  return {};
}

} // namespace hostrun
