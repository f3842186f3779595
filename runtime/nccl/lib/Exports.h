//===- Exports.h - The pnccl* aliases of the exported functions -----------===//
//
// NCCL exports every function twice, as nccl<Name> and as pnccl<Name> (for
// profilers that interpose the first). NCCL_ALIAS(ncclX), written after
// ncclX's definition in the same file, defines pncclX as the same code.
// The version script (exports.map) exports these two families only.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_NCCL_EXPORTS_H
#define MSCCLC_NCCL_EXPORTS_H

#include "nccl.h"

#define NCCL_ALIAS(name)                                                       \
  extern "C" decltype(name) p##name __attribute__((alias(#name)))

#endif // MSCCLC_NCCL_EXPORTS_H
