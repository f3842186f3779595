//===- Expressions.h - What every output element of a program holds -*- C++ -*-===//
//
// The proof's account of a program's results, for tools outside the
// compiler that check it against a real run: for every rank and output
// chunk, the reduction expression its elements hold (a leaf is a rank's
// input chunk at the same position in the chunk; an operation applies the
// run-time reduction operator, left operand first, in the element type;
// a switch node reduces its children in the switch's order), and the counts
// at which the chunk's last element holds something else (an error the
// proof reports; empty for a proven program). `mscclc --emit=exprs` prints
// it; docs/verification.md describes the format.
//
//===----------------------------------------------------------------------===//
#ifndef MSCL_VERIFICATION_EXPRESSIONS_H
#define MSCL_VERIFICATION_EXPRESSIONS_H

#include "mscl/IR/MsclOps.h"

#include "llvm/Support/raw_ostream.h"

namespace mscl {

/// Writes the expressions of `program`'s outputs as JSON; fails (with an
/// error at the program) when the program does not run to completion or
/// its shape does not fit its collective.
mlir::LogicalResult writeExpressions(ProgramOp program, llvm::raw_ostream &os);

} // namespace mscl

#endif // MSCL_VERIFICATION_EXPRESSIONS_H
