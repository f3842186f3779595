//===- MLIRGen.h - Evaluated program to the mscl dialect -----------------===//
#ifndef MSCCLC_MLIRGEN_MLIRGEN_H
#define MSCCLC_MLIRGEN_MLIRGEN_H

#include "mscclc/Frontend/Program.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace mscclc {

/// Builds a module holding one `mscl.program` for `program`. Every operation
/// keeps the .mscl location it came from. Returns null (after emitting a
/// diagnostic) if the program cannot be represented.
mlir::OwningOpRef<mlir::ModuleOp> generateMLIR(const Program &program,
                                               mlir::MLIRContext &ctx);

} // namespace mscclc

#endif // MSCCLC_MLIRGEN_MLIRGEN_H
