//===- Reference.h - Inputs and the expected result of a collective -*- C++ -*-===//
#ifndef MSCCLC_LIB_SIMULATOR_REFERENCE_H
#define MSCCLC_LIB_SIMULATOR_REFERENCE_H

#include "Machine.h"

namespace mscclc {
namespace sim {

/// Elements of each rank's input for the collective at `layout.count`.
int64_t inputElements(const Model &model, const Layout &layout);

/// Random inputs per rank, in ranges where the reduction stays well inside
/// the type (values in [-1, 1] for sums, near 1 for products).
std::vector<std::vector<Word>> makeInputs(const Model &model,
                                          const Layout &layout, DataType type,
                                          ReduceKind reduce, uint64_t seed);

/// Compares every rank's result with the collective's definition (and, out
/// of place, that the input is unchanged). Floating-point sums are compared
/// with a tolerance of N * u * sum|x_i|, the bound for any summation order.
mlir::LogicalResult checkResult(const Machine &machine, const Model &model,
                                const Layout &layout, DataType type,
                                ReduceKind reduce,
                                const std::vector<std::vector<Word>> &inputs,
                                llvm::StringRef context);

} // namespace sim
} // namespace mscclc

#endif // MSCCLC_LIB_SIMULATOR_REFERENCE_H
