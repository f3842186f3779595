//===- Oracle.h - Inputs and the expected outputs of a launch ------------===//
//
// For every launch the oracle draws each rank's input from the seed and
// says, for every element of each rank's logical output (language.md's
// output@r), what it must hold afterwards:
//   Exact   these bits: a copy, or a reduction that is exact in any order
//           (integers, whose arithmetic wraps; min and max), or, with an
//           expression file, the reduction the proof says, evaluated in T
//           with the kernels' own RedOp in the proof's order;
//   Approx  within a tolerance of a value: float sum and prod, whose
//           rounding depends on the order the algorithm chose;
//   Keep    what it held before: outputs the collective leaves undefined
//           and a program must not write (reduce and gather off the root);
//   Free    anything.
// Before a launch, an element that must change holds something it must
// not end as (the bitwise complement of the expected bits, or a NaN), so
// an element nobody writes is always wrong.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_TEST_HOSTRUN_ORACLE_H
#define MSCCLC_TEST_HOSTRUN_ORACLE_H

#include "DType.h"
#include "Plan.h"

#include <memory>
#include <string>
#include <vector>

namespace hostrun {

enum class Check : uint8_t { Exact, Approx, Keep, Free };

/// Where a rank's logical input and output lie in its buffers for a count.
/// Out of place they are the input and output buffers; in place both lie
/// in the one buffer (language.md: allgather and gather inputs at block r,
/// reducescatter and scatter outputs at block r).
struct Geometry {
  uint64_t count = 0;
  uint64_t inElems = 0, outElems = 0; ///< logical input and output
  uint64_t inBase = 0, outBase = 0;   ///< in place: their offsets
  uint64_t bufElems = 0; ///< the output buffer (in place: the one buffer)
};
Geometry geometry(const Plan &plan, int rank, uint64_t count);

/// User-buffer chunk holding element e of a buffer of `chunks` chunks.
uint64_t chunkOf(uint64_t e, uint64_t count, uint64_t chunks, uint64_t limit);

struct RankCase {
  Geometry geo;
  std::vector<unsigned char> input;   ///< the logical input
  std::vector<unsigned char> initial; ///< the output buffer before launch
  std::vector<Check> check;           ///< per logical output element
  std::vector<unsigned char> expect;  ///< Exact and Keep: the bits
  std::vector<double> value, tol;     ///< Approx
};

struct Case {
  uint64_t count = 0;
  std::vector<RankCase> ranks;
};

class Exprs;

class Oracle {
public:
  /// `exprsPath` empty: check the collective's definition.
  Oracle(const Plan &plan, const DType &type, const std::string &redop,
         uint64_t seed, const std::string &exprsPath);
  ~Oracle();

  Case make(unsigned launch, uint64_t count) const;

  /// What a wrong element holds, where that can be told (never written; a
  /// reduction of only some of the contributions; some rank's input).
  std::string explain(const Case &c, int rank, uint64_t element,
                      const unsigned char *got) const;

  bool usesExprs() const { return exprs_ != nullptr; }

private:
  struct Term {
    int rank;
    uint64_t element; ///< of that rank's logical input
  };
  enum class Rule { Reduce, Copy, Keep, Free };
  /// The collective's definition of element e of rank r's logical output.
  Rule rule(const Geometry &g, int r, uint64_t e,
            std::vector<Term> &terms) const;
  void fillInput(unsigned launch, int rank, std::vector<unsigned char> &out,
                 uint64_t elems) const;
  void expectCollective(const Case &c, int r, RankCase &rc) const;

  const Plan &plan_;
  const DType &type_;
  std::string redop_;
  uint64_t seed_;
  std::unique_ptr<Exprs> exprs_;
};

} // namespace hostrun

#endif // MSCCLC_TEST_HOSTRUN_ORACLE_H
