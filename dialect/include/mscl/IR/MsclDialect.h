//===- MsclDialect.h - The mscl dialect, its enums and attributes --------===//
#ifndef MSCL_IR_MSCLDIALECT_H
#define MSCL_IR_MSCLDIALECT_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"

#include "mscclc/floor/Tables.h"

#include "mscl/IR/MsclDialect.h.inc"
#include "mscl/IR/MsclEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "mscl/IR/MsclAttrs.h.inc"

namespace mscl {

/// The floor's collective (mscclc/floor/Collectives.def): the ODS enum has
/// its names and values (static_asserts in MsclDialect.cpp).
inline mscclc::Collective toFloor(CollectiveKind kind) {
  return static_cast<mscclc::Collective>(static_cast<int>(kind));
}
inline CollectiveKind fromFloor(mscclc::Collective c) {
  return static_cast<CollectiveKind>(static_cast<int>(c));
}

/// Collectives that combine the ranks' inputs with the reduction operator.
inline bool isReduction(CollectiveKind kind) {
  return mscclc::collectiveReduces(toFloor(kind));
}

/// Collectives whose result is defined at the root only: NCCL ignores the
/// other ranks' receive buffers (they may pass NULL), so a program must not
/// write them.
inline bool resultAtRootOnly(CollectiveKind kind) {
  return mscclc::resultAtRootOnly(toFloor(kind));
}

/// Collectives that take a `root`.
inline bool hasRoot(CollectiveKind kind) {
  return mscclc::collectiveRooted(toFloor(kind));
}

} // namespace mscl

#endif // MSCL_IR_MSCLDIALECT_H
