//===- MsclDialect.h - The mscl dialect, its enums and attributes --------===//
#ifndef MSCL_IR_MSCLDIALECT_H
#define MSCL_IR_MSCLDIALECT_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"

#include "mscl/IR/MsclDialect.h.inc"
#include "mscl/IR/MsclEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "mscl/IR/MsclAttrs.h.inc"

namespace mscl {

/// Collectives that combine the ranks' inputs with the reduction operator.
inline bool isReduction(CollectiveKind kind) {
  return kind == CollectiveKind::allreduce ||
         kind == CollectiveKind::reducescatter ||
         kind == CollectiveKind::reduce;
}

/// Collectives whose result is defined at the root only: NCCL ignores the
/// other ranks' receive buffers (they may pass NULL), so a program must not
/// write them.
inline bool resultAtRootOnly(CollectiveKind kind) {
  return kind == CollectiveKind::reduce || kind == CollectiveKind::gather;
}

/// Collectives that take a `root`.
inline bool hasRoot(CollectiveKind kind) {
  return kind == CollectiveKind::broadcast || kind == CollectiveKind::reduce ||
         kind == CollectiveKind::gather || kind == CollectiveKind::scatter;
}

} // namespace mscl

#endif // MSCL_IR_MSCLDIALECT_H
