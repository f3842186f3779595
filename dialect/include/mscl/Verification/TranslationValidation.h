//===- TranslationValidation.h - Passes keep what programs compute -*- C++ -*-===//
//
// The static proofs check the program that is emitted, after the
// optimisation pipeline; translation validation checks that the pipeline
// kept what the program computes. Before the first pass it evaluates every
// mscl.program as MLIRGen produced it (docs/verification.md, "Translation
// validation"): for every rank and output chunk, the reduction expression
// (operands and their order) of its elements, and the counts at which its
// last element holds the same. After every pass that changed a program's
// data movement it evaluates again and compares, output chunk by output
// chunk (through replication's renumbering of chunks); a difference is an
// internal error naming the pass, the rank, the chunk and both expressions.
//
// The values are those of the abstract schedule, which every schedule
// gives only for a race-free program: so a difference is trustworthy once
// the proofs accepted the program the pipeline produced. The errors are
// therefore held back; the driver prints them when the proofs passed (or
// were skipped), and drops them otherwise (the proofs' errors say what is
// wrong with the program).
//
//   mscl::TranslationValidation validation;
//   pm.addInstrumentation(validation.instrumentation());
//   if (succeeded(pm.run(module)) && validation.failed())
//     validation.printErrors(llvm::errs());
//
//===----------------------------------------------------------------------===//
#ifndef MSCL_VERIFICATION_TRANSLATIONVALIDATION_H
#define MSCL_VERIFICATION_TRANSLATIONVALIDATION_H

#include "mlir/Pass/PassInstrumentation.h"

#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <memory>

namespace mscl {

class TranslationValidation {
public:
  TranslationValidation();
  ~TranslationValidation();

  /// An instrumentation for a pass manager that reports to this object
  /// (several pass managers may share it, e.g. one per input split).
  std::unique_ptr<mlir::PassInstrumentation> instrumentation();

  /// Whether some pass changed what some program computes.
  bool failed() const { return failures.load() > 0; }
  /// Prints each difference found, as `file:line:col: error: ...`.
  void printErrors(llvm::raw_ostream &os) const;

private:
  class Instrumentation;
  struct State;
  std::unique_ptr<State> state;
  std::atomic<int> failures{0};
};

} // namespace mscl

#endif // MSCL_VERIFICATION_TRANSLATIONVALIDATION_H
