//===- Arith.h - Element storage and arithmetic of the simulator -*- C++ -*-===//
//
// Every element is stored in a 64-bit word: a double for floating-point
// types (always holding a value representable in the simulated type) and
// the two's-complement bits for integers. Copies move words; reductions
// compute in the simulated type's precision, rounding after every step as
// the GPU does.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_LIB_SIMULATOR_ARITH_H
#define MSCCLC_LIB_SIMULATOR_ARITH_H

#include "mscclc/Simulator/Simulator.h"

#include <cstdint>

namespace mscclc {
namespace sim {

using Word = uint64_t;

bool isFloat(DataType type);
/// Unit roundoff of a floating-point type (2^-24 for f32); 0 for integers.
double unitRoundoff(DataType type);

/// The smallest positive (subnormal) value of a floating-point type: the
/// spacing of its values near 0, where rounding errors are absolute.
double subnormalSpacing(DataType type);

/// `value` rounded to the nearest value of `type` (to nearest even), as the
/// device computes it: 16-bit and 8-bit results are computed in f32 and
/// converted once; fp8 saturates to its largest finite value.
double roundTo(DataType type, double value);

/// fp8 encodings (f8e4m3, f8e5m2): the bits CUDA's saturating conversion
/// gives for `value`, and the value of `bits`.
uint8_t fp8Bits(DataType type, double value);
double fp8Value(DataType type, uint8_t bits);
/// Two's-complement wrap of `bits` to the width of integer `type`.
Word wrapInt(DataType type, Word bits);

Word fromDouble(double value);
double toDouble(Word word);

/// acc[i] = acc[i] (op) src[i] for i < n, in `type`. `avg` reduces as sum
/// (the division by the rank count happens once at the end).
void reduceInto(DataType type, ReduceKind kind, Word *acc, const Word *src,
                int64_t n);
/// Divides every element by `divisor` (for avg), in `type`.
void divideBy(DataType type, Word *data, int64_t n, int64_t divisor);

/// Human-readable element value.
std::string formatWord(DataType type, Word word);

} // namespace sim
} // namespace mscclc

#endif // MSCCLC_LIB_SIMULATOR_ARITH_H
