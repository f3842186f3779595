//===- DType.h - Element types as the harness sees them ------------------===//
//
// The harness is compiled once for every element type: it handles elements
// as bytes and asks the kernel unit (KernelUnit.h) for arithmetic and
// conversions. This is what it needs to know besides: the kind of value,
// for generating inputs and choosing exact or approximate checks, and how
// to print one.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_TEST_HOSTRUN_DTYPE_H
#define MSCCLC_TEST_HOSTRUN_DTYPE_H

#include <cstdint>
#include <string>

namespace hostrun {

enum class Kind { Float, Signed, Unsigned };

struct DType {
  const char *name;
  unsigned size;
  Kind kind;
  /// Unit roundoff 2^-p of a float type with p significand bits (0 for
  /// integers): the largest relative error of one rounded operation.
  double roundoff;
};

/// The type named as in MSCCLC_DTYPE, or null.
const DType *findDType(const std::string &name);

/// An element's bits as an integer (little-endian, zero-extended).
uint64_t elementBits(const unsigned char *p, unsigned size);

/// An element for a message: integers in decimal, floats as their value
/// and bits.
std::string formatElement(const DType &t, const unsigned char *p);

} // namespace hostrun

#endif // MSCCLC_TEST_HOSTRUN_DTYPE_H
