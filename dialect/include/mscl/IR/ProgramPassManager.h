//===- ProgramPassManager.h - Passes that run on each mscl.program -*- C++ -*-===//
//
// Every mscl pass runs on one mscl.program (programs are isolated from
// above). Pipeline builders add them through programPassManager, so that a
// pass manager on a module nests them, and one already on programs takes
// them itself.
//
//===----------------------------------------------------------------------===//
#ifndef MSCL_IR_PROGRAMPASSMANAGER_H
#define MSCL_IR_PROGRAMPASSMANAGER_H

#include "mscl/IR/MsclOps.h"

#include "mlir/Pass/PassManager.h"

namespace mscl {

/// `pm` itself when it runs on programs, else its nested program manager.
inline mlir::OpPassManager &programPassManager(mlir::OpPassManager &pm) {
  return pm.getOpName() == ProgramOp::getOperationName()
             ? pm
             : pm.nest(ProgramOp::getOperationName());
}

} // namespace mscl

#endif // MSCL_IR_PROGRAMPASSMANAGER_H
