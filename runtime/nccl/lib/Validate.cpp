//===- Validate.cpp - Argument checks of the NCCL collectives -------------===//

#include "Validate.h"

#include <limits>

namespace mscclc::nccl {

size_t elementSize(int dtype) {
  switch (dtype) {
  case ncclInt8:
  case ncclUint8:
  case ncclFloat8e4m3:
  case ncclFloat8e5m2: return 1;
  case ncclFloat16:
  case ncclBfloat16: return 2;
  case ncclInt32:
  case ncclUint32:
  case ncclFloat32: return 4;
  case ncclInt64:
  case ncclUint64:
  case ncclFloat64: return 8;
  default: return 0;
  }
}

std::string dtypeName(int dtype) {
  switch (dtype) {
  case ncclInt8: return "int8";
  case ncclUint8: return "uint8";
  case ncclInt32: return "int32";
  case ncclUint32: return "uint32";
  case ncclInt64: return "int64";
  case ncclUint64: return "uint64";
  case ncclFloat16: return "float16";
  case ncclFloat32: return "float32";
  case ncclFloat64: return "float64";
  case ncclBfloat16: return "bfloat16";
  case ncclFloat8e4m3: return "float8e4m3";
  case ncclFloat8e5m2: return "float8e5m2";
  default: return fmt::format("dtype {}", dtype);
  }
}

std::string redOpName(int op) {
  switch (op) {
  case ncclSum: return "sum";
  case ncclProd: return "prod";
  case ncclMax: return "max";
  case ncclMin: return "min";
  case ncclAvg: return "avg";
  default:
    return op >= ncclNumOps ? fmt::format("premulsum#{}", op)
                           : fmt::format("op {}", op);
  }
}

bool reduces(Collective c) {
  return c == Collective::AllReduce || c == Collective::ReduceScatter ||
         c == Collective::Reduce;
}

bool rooted(Collective c) {
  return c == Collective::Broadcast || c == Collective::Reduce ||
         c == Collective::Gather || c == Collective::Scatter;
}

namespace {

/// Elements of the larger buffer per `count`: the whole-communicator side
/// of AllGather, ReduceScatter, AlltoAll, Gather and Scatter.
size_t bufferScale(Collective c, int nranks) {
  switch (c) {
  case Collective::AllGather:
  case Collective::ReduceScatter:
  case Collective::AllToAll:
  case Collective::Gather:
  case Collective::Scatter: return size_t(nranks);
  default: return 1;
  }
}

/// Which buffers this rank reads and writes (the others may be NULL, as in
/// NCCL: a broadcast's non-root send buffer, a reduce's non-root receive
/// buffer, ...).
void buffersUsed(const CollectiveArgs &a, int rank, bool *send, bool *recv) {
  bool isRoot = rank == a.root;
  switch (a.collective) {
  case Collective::Broadcast: *send = isRoot; *recv = true; return;
  case Collective::Reduce: *send = true; *recv = isRoot; return;
  case Collective::Gather: *send = true; *recv = isRoot; return;
  case Collective::Scatter: *send = isRoot; *recv = true; return;
  case Collective::Send: *send = true; *recv = false; return;
  case Collective::Recv: *send = false; *recv = true; return;
  default: *send = true; *recv = true; return;
  }
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
