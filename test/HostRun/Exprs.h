//===- Exprs.h - Reduction expressions the proof assigns to outputs ------===//
//
// An expression file (`--exprs`, format in docs/testing.md) says, for
// output chunks of some ranks, the reduction tree every element of the
// chunk holds: leaves are (rank, input chunk) at the same position in the
// chunk, inner nodes apply RedOp to their left, then right operand. The
// harness evaluates the trees in T with the kernels' own RedOp::apply
// (KernelUnit.h) and compares bit for bit.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_TEST_HOSTRUN_EXPRS_H
#define MSCCLC_TEST_HOSTRUN_EXPRS_H

#include "Oracle.h"

namespace hostrun {

class Exprs {
public:
  /// Reads and checks a file against the plan; throws std::runtime_error.
  static std::unique_ptr<Exprs> read(const std::string &path, const Plan &plan);

  /// Marks the elements of rank r's output chunks that the file covers at
  /// this count Exact, with the trees' values; leaves the others alone.
  void expect(const Plan &plan, const Case &c, int r, RankCase &rc,
              unsigned elemSize) const;

private:
  struct Node {
    bool leaf;
    uint64_t a, b; ///< leaf: rank, input chunk; op: operand nodes
  };
  struct Output {
    int rank;
    uint64_t chunk;
    size_t node;
    std::vector<uint64_t> residues; ///< of count mod chunks; empty: all
    std::vector<size_t> under;      ///< the nodes under `node`, in file order
  };
  std::vector<Node> nodes_;
  std::vector<Output> outputs_;
};

} // namespace hostrun

#endif // MSCCLC_TEST_HOSTRUN_EXPRS_H
