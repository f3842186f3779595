//===- Validate.h - Argument checks of the NCCL collectives ---------------===//
//
// What every collective checks before it runs anywhere (pure, unit-tested
// without a GPU): data type and operator, the buffers its rank reads and
// writes given the root, the root or peer rank, and that the bytes it
// touches fit in size_t. Failures are ncclInvalidArgument with a message.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_NCCL_VALIDATE_H
#define MSCCLC_NCCL_VALIDATE_H

#include "Route.h"

#include <optional>
#include <vector>

namespace mscclc::nccl {

/// Bytes of one element; 0 for values outside ncclDataType_t.
size_t elementSize(int dtype);
/// "float32", ... ("dtype 42" for unknown values).
std::string dtypeName(int dtype);
/// "sum", ..., "premulsum#5" for a dynamic operator.
std::string redOpName(int op);
/// Whether the collective reduces (takes an operator).
bool reduces(Collective c);
/// Whether the collective has a root (Broadcast, Reduce, Gather, Scatter).
bool rooted(Collective c);

/// A PreMulSum operator made on a communicator.
struct PreMulSumOp {
  int dtype = 0;
  ncclScalarResidence_t residence = ncclScalarHostImmediate;
  std::vector<char> hostScalar; ///< the value, for ncclScalarHostImmediate
  const void *deviceScalar = nullptr;
  bool hasRealOp = false;
  ncclRedOp_t realOp = ncclSum; ///< the same operator on the fallback
};

struct CollectiveArgs {
  Collective collective;
  const void *send = nullptr;
  void *recv = nullptr;
  size_t count = 0; ///< NCCL's count (see nccl.h)
  int dtype = 0;
  int op = 0;
  int root = 0; ///< root, or the peer of Send/Recv
  /// For an operator of ncclRedOpCreatePreMulSum: a copy of it, taken when
  /// the call is made (the operator may be destroyed before the group that
  /// holds the call ends, as NCCL allows).
  std::optional<PreMulSumOp> premul;
  /// Runs on the caller's buffers, not staged (both lie in symmetric
  /// windows: Registrations.h).
  bool direct = false;
};

/// `rank` of `nranks`; `dynamicOpKnown`: whether `args.op` (>= ncclNumOps)
/// names an operator created on this communicator and not destroyed.
Outcome checkArguments(const CollectiveArgs &args, int rank, int nranks,
                       bool dynamicOpKnown);

/// "ncclAllReduce of 1024 float32 (sum)" for messages and logs.
std::string describeCall(const CollectiveArgs &args);

} // namespace mscclc::nccl

#endif // MSCCLC_NCCL_VALIDATE_H
