//===- MsclDialect.cpp - Registration of the mscl dialect ----------------===//

#include "mscl/IR/MsclDialect.h"
#include "mscl/IR/MsclOps.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mscl;

#include "mscl/IR/MsclDialect.cpp.inc"
#include "mscl/IR/MsclEnums.cpp.inc"

void MsclDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "mscl/IR/MsclOps.cpp.inc"
      >();
  registerAttributes();
}
