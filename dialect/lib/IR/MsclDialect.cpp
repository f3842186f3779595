//===- MsclDialect.cpp - Registration of the mscl dialect ----------------===//

#include "mscl/IR/MsclDialect.h"
#include "mscl/IR/MsclOps.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mscl;

#include "mscl/IR/MsclDialect.cpp.inc"
#include "mscl/IR/MsclEnums.cpp.inc"

// The ODS enum of collectives is the floor's (mscclc/floor/Collectives.def)
// written for tblgen, which cannot read the C table: every row must be a
// case of the same name and value, and there must be no other case.
#define MSCCLC_COLLECTIVE(Id, name, ...)                                       \
  static_assert(static_cast<int>(CollectiveKind::name) ==                      \
                    static_cast<int>(mscclc::Collective::Id),                  \
                "mscl collective " #name " differs from Collectives.def");
#include "mscclc/floor/Collectives.def"
static_assert(getMaxEnumValForCollectiveKind() + 1 == mscclc::kNumCollectives,
              "MsclAttrs.td has a collective that Collectives.def lacks");

void MsclDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "mscl/IR/MsclOps.cpp.inc"
      >();
  registerAttributes();
}
