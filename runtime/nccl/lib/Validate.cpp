//===- Validate.cpp - Argument checks of the NCCL collectives -------------===//

#include "Validate.h"

#include "mscclc/floor/Shape.h"

#include <algorithm>
#include <limits>

namespace mscclc::nccl {

// nccl.h's enums are ABI, written out there for C; they must agree with
// the floor's tables (mscclc/floor/*.def) value for value.
#define MSCCLC_DATA_TYPE(Id, name, ncclName, bytes, value, mscclc, multimem)   \
  static_assert(nccl##Id == value, "nccl" #Id);
#include "mscclc/floor/DataTypes.def"
static_assert(ncclNumTypes == kNumDataTypes);
// PreMulSum has no enumerator (NCCL makes those operators at run time), so
// the built-in operators are listed here.
static_assert(ncclSum == redOpInfo(RedOp::Sum).nccl);
static_assert(ncclProd == redOpInfo(RedOp::Prod).nccl);
static_assert(ncclMax == redOpInfo(RedOp::Max).nccl);
static_assert(ncclMin == redOpInfo(RedOp::Min).nccl);
static_assert(ncclAvg == redOpInfo(RedOp::Avg).nccl);
static_assert(ncclNumOps == [] {
  int n = 0;
  for (const RedOpInfo &op : kRedOps)
    n += op.nccl >= 0;
  return n;
}());

size_t elementSize(int dtype) {
  std::optional<DataType> t = dataTypeOfNccl(dtype);
  return t ? dataTypeSize(*t) : 0;
}

std::string dtypeName(int dtype) {
  if (std::optional<DataType> t = dataTypeOfNccl(dtype))
    return dataTypeInfo(*t).ncclName;
  return fmt::format("dtype {}", dtype);
}

std::string redOpName(int op) {
  if (std::optional<RedOp> r = redOpOfNccl(op))
    return mscclc::redOpName(*r);
  return op >= ncclNumOps ? fmt::format("premulsum#{}", op)
                          : fmt::format("op {}", op);
}

bool reduces(Collective c) {
  std::optional<mscclc::Collective> f = floorCollective(c);
  return f && collectiveReduces(*f);
}

bool rooted(Collective c) {
  std::optional<mscclc::Collective> f = floorCollective(c);
  return f && collectiveRooted(*f);
}

namespace {

/// Elements of the larger buffer per `count`: the whole-communicator side
/// of AllGather, ReduceScatter, AlltoAll, Gather and Scatter.
size_t bufferScale(Collective c, int nranks) {
  std::optional<mscclc::Collective> f = floorCollective(c);
  if (!f)
    return 1;
  return size_t(std::max(inputElements(*f, 1, nranks),
                         outputElements(*f, 1, nranks)));
}

/// Which buffers this rank reads and writes (the others may be NULL, as in
/// NCCL: a broadcast's non-root send buffer, a reduce's non-root receive
/// buffer, ...).
void buffersUsed(const CollectiveArgs &a, int rank, bool *send, bool *recv) {
  bool isRoot = rank == a.root;
  if (a.collective == Collective::Send || a.collective == Collective::Recv) {
    *send = a.collective == Collective::Send;
    *recv = a.collective == Collective::Recv;
    return;
  }
  mscclc::Collective c = *floorCollective(a.collective);
  *send = !inputAtRootOnly(c) || isRoot;
  *recv = !resultAtRootOnly(c) || isRoot;
}

} // namespace

std::string describeCall(const CollectiveArgs &a) {
  std::string s = fmt::format("nccl{} of {} {}", collectiveName(a.collective),
                              a.count, dtypeName(a.dtype));
  if (reduces(a.collective))
    s += fmt::format(" ({})", redOpName(a.op));
  if (rooted(a.collective))
    s += fmt::format(" at root {}", a.root);
  if (a.collective == Collective::Send || a.collective == Collective::Recv)
    s += fmt::format(" with peer {}", a.root);
  return s;
}

Outcome checkArguments(const CollectiveArgs &a, int rank, int nranks,
                       bool dynamicOpKnown) {
  std::string call = describeCall(a);
  size_t elem = elementSize(a.dtype);
  if (elem == 0)
    return invalidArgument(fmt::format(
        "{}: invalid data type {} (ncclDataType_t has 0 to {})", call, a.dtype,
        int(ncclNumTypes) - 1));
  if (reduces(a.collective)) {
    if (a.op < 0 || (a.op >= ncclNumOps && !dynamicOpKnown))
      return invalidArgument(fmt::format(
          "{}: invalid reduction operator {} (not sum, prod, max, min, avg, "
          "nor an operator ncclRedOpCreatePreMulSum made on this "
          "communicator and not destroyed)",
          call, a.op));
  }
  bool peerCall = a.collective == Collective::Send || a.collective == Collective::Recv;
  if ((rooted(a.collective) || peerCall) && (a.root < 0 || a.root >= nranks))
    return invalidArgument(fmt::format("{}: {} {} is not a rank of this "
                                       "communicator (0 to {})",
                                       call, peerCall ? "peer" : "root", a.root,
                                       nranks - 1));
  size_t scale = bufferScale(a.collective, nranks);
  if (a.count > std::numeric_limits<size_t>::max() / elem / scale)
    return invalidArgument(fmt::format(
        "{}: count {} overflows: {} bytes per element{} exceed the address "
        "space",
        call, a.count, elem,
        scale > 1 ? fmt::format(" times {} ranks", scale) : ""));
  if (a.count == 0)
    return Outcome::success();
  bool needSend = false, needRecv = false;
  buffersUsed(a, rank, &needSend, &needRecv);
  if (needSend && !a.send)
    return invalidArgument(fmt::format(
        "{}: the send buffer is NULL on rank {}", call, rank));
  if (needRecv && !a.recv)
    return invalidArgument(fmt::format(
        "{}: the receive buffer is NULL on rank {}", call, rank));
  return Outcome::success();
}

} // namespace mscclc::nccl
