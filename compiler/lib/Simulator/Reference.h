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

/// The expected value of one element and how far a result may be off.
struct Expected {
  Word exact = 0;
  double value = 0, tolerance = 0;
  bool approximate = false;
};

/// The collective's result for one size, computed once and checked against
/// every schedule's buffers.
class Reference {
public:
  Reference(const Model &model, const Layout &layout, DataType type,
            ReduceKind reduce, std::vector<std::vector<Word>> inputs);
  const std::vector<std::vector<Word>> &inputs() const { return in; }
  /// Compares every rank's result with the collective's definition (and,
  /// out of place, that the input is unchanged). Floating-point sums are
  /// compared with a tolerance of N * u * sum|x_i|, the bound for any
  /// summation order; an allreduce's ranks must also agree bit for bit.
  mlir::LogicalResult check(const Machine &machine) const;

private:
  Expected reduceElement(int64_t index) const;
  /// reduce and gather: a non-root rank's output must stay unwritten (in
  /// place, it is that rank's read-only input).
  mlir::LogicalResult checkUntouched(const Machine &machine, int rank) const;
  /// allreduce: every rank's result has the same bits as rank 0's (within
  /// the tolerance is not enough: replicas of a model must not drift).
  mlir::LogicalResult checkSameBits(const Machine &machine) const;

  const Model &model;
  Layout layout;
  DataType type;
  ReduceKind reduce;
  std::vector<std::vector<Word>> in;
  /// Reductions over ranks of every input element (reducing collectives).
  std::vector<Expected> reduced;
};

} // namespace sim
} // namespace mscclc

#endif // MSCCLC_LIB_SIMULATOR_REFERENCE_H
