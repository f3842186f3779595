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

/// `value` rounded to the nearest value of `type` (to nearest even).
double roundTo(DataType type, double value);
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
