//===- MsclOps.h - Operations of the mscl dialect ------------------------===//
#ifndef MSCL_IR_MSCLOPS_H
#define MSCL_IR_MSCLOPS_H

#include "mscl/IR/MsclDialect.h"
#include "mscl/IR/MsclSemantics.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/IR/SymbolTable.h"

#include "mscl/IR/MsclInterfaces.h.inc"

#define GET_OP_CLASSES
#include "mscl/IR/MsclOps.h.inc"

#endif // MSCL_IR_MSCLOPS_H
