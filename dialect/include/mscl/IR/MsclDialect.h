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

#endif // MSCL_IR_MSCLDIALECT_H
