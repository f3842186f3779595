//===- Collectives.cpp - The exported collectives and point-to-point calls ===//

#include "Dispatch.h"
#include "Exports.h"
#include "SelfCalls.h"

using namespace mscclc::nccl;

namespace {

ncclResult_t run(Collective coll, const void *send, void *recv, size_t count,
                 ncclDataType_t dtype, int op, int root, ncclComm_t comm,
                 cudaStream_t stream) {
  CollectiveArgs a;
  a.collective = coll;
  a.send = send;
  a.recv = recv;
  a.count = count;
  a.dtype = int(dtype);
  a.op = op;
  a.root = root;
  return dispatch(a, comm, stream);
}

} // namespace

extern "C" {

ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
                        ncclDataType_t datatype, ncclRedOp_t op,
                        ncclComm_t comm, cudaStream_t stream) {
  MSCCLC_REAL_SELF_CALL(AllReduce, sendbuff, recvbuff, count, datatype,
                        op, comm, stream);
  return run(Collective::AllReduce, sendbuff, recvbuff, count, datatype, op, 0,
             comm, stream);
}

ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff,
                        size_t sendcount, ncclDataType_t datatype,
                        ncclComm_t comm, cudaStream_t stream) {
  MSCCLC_REAL_SELF_CALL(AllGather, sendbuff, recvbuff, sendcount,
                        datatype, comm, stream);
  return run(Collective::AllGather, sendbuff, recvbuff, sendcount, datatype,
             ncclSum, 0, comm, stream);
}

ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff,
                            size_t recvcount, ncclDataType_t datatype,
                            ncclRedOp_t op, ncclComm_t comm,
                            cudaStream_t stream) {
  MSCCLC_REAL_SELF_CALL(ReduceScatter, sendbuff, recvbuff, recvcount,
                        datatype, op, comm, stream);
  return run(Collective::ReduceScatter, sendbuff, recvbuff, recvcount, datatype,
             op, 0, comm, stream);
}

ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count,
                        ncclDataType_t datatype, int root, ncclComm_t comm,
                        cudaStream_t stream) {
  MSCCLC_REAL_SELF_CALL(Broadcast, sendbuff, recvbuff, count, datatype,
                        root, comm, stream);
  return run(Collective::Broadcast, sendbuff, recvbuff, count, datatype,
             ncclSum, root, comm, stream);
}

/// The in-place broadcast of NCCL's first API.
ncclResult_t ncclBcast(void *buff, size_t count, ncclDataType_t datatype,
                       int root, ncclComm_t comm, cudaStream_t stream) {
  MSCCLC_REAL_SELF_CALL(Bcast, buff, count, datatype, root, comm,
                        stream);
  return run(Collective::Broadcast, buff, buff, count, datatype, ncclSum, root,
             comm, stream);
}

ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count,
                        ncclDataType_t datatype, ncclRedOp_t op, int root,
                        ncclComm_t comm, cudaStream_t stream) {
  MSCCLC_REAL_SELF_CALL(Reduce, sendbuff, recvbuff, count, datatype, op,
                        root, comm, stream);
  return run(Collective::Reduce, sendbuff, recvbuff, count, datatype, op, root,
             comm, stream);
}

ncclResult_t ncclAlltoAll(const void *sendbuff, void *recvbuff, size_t count,
                          ncclDataType_t datatype, ncclComm_t comm,
                          cudaStream_t stream) {
  MSCCLC_REAL_SELF_CALL(AlltoAll, sendbuff, recvbuff, count, datatype,
                        comm, stream);
  return run(Collective::AllToAll, sendbuff, recvbuff, count, datatype, ncclSum,
             0, comm, stream);
}

ncclResult_t ncclGather(const void *sendbuff, void *recvbuff, size_t count,
                        ncclDataType_t datatype, int root, ncclComm_t comm,
                        cudaStream_t stream) {
  MSCCLC_REAL_SELF_CALL(Gather, sendbuff, recvbuff, count, datatype,
                        root, comm, stream);
  return run(Collective::Gather, sendbuff, recvbuff, count, datatype, ncclSum,
             root, comm, stream);
}

ncclResult_t ncclScatter(const void *sendbuff, void *recvbuff, size_t count,
                         ncclDataType_t datatype, int root, ncclComm_t comm,
                         cudaStream_t stream) {
  MSCCLC_REAL_SELF_CALL(Scatter, sendbuff, recvbuff, count, datatype,
                        root, comm, stream);
  return run(Collective::Scatter, sendbuff, recvbuff, count, datatype, ncclSum,
             root, comm, stream);
}

ncclResult_t ncclSend(const void *sendbuff, size_t count,
                      ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  MSCCLC_REAL_SELF_CALL(Send, sendbuff, count, datatype, peer, comm,
                        stream);
  return run(Collective::Send, sendbuff, nullptr, count, datatype, ncclSum,
             peer, comm, stream);
}

ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype,
                      int peer, ncclComm_t comm, cudaStream_t stream) {
  MSCCLC_REAL_SELF_CALL(Recv, recvbuff, count, datatype, peer, comm,
                        stream);
  return run(Collective::Recv, nullptr, recvbuff, count, datatype, ncclSum,
             peer, comm, stream);
}

ncclResult_t ncclGroupStart(void) {
  MSCCLC_REAL_SELF_CALL(GroupStart);
  return groupStart();
}
ncclResult_t ncclGroupEnd(void) {
  MSCCLC_REAL_SELF_CALL(GroupEnd);
  return groupEnd(nullptr);
}
ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t *simInfo) {
  MSCCLC_REAL_SELF_CALL(GroupSimulateEnd, simInfo);
  if (!simInfo)
    return fail(ncclInvalidArgument, "ncclGroupSimulateEnd: simInfo is NULL");
  return groupEnd(simInfo);
}

NCCL_ALIAS(ncclAllReduce);
NCCL_ALIAS(ncclAllGather);
NCCL_ALIAS(ncclReduceScatter);
NCCL_ALIAS(ncclBroadcast);
NCCL_ALIAS(ncclBcast);
NCCL_ALIAS(ncclReduce);
NCCL_ALIAS(ncclAlltoAll);
NCCL_ALIAS(ncclGather);
NCCL_ALIAS(ncclScatter);
NCCL_ALIAS(ncclSend);
NCCL_ALIAS(ncclRecv);
NCCL_ALIAS(ncclGroupStart);
NCCL_ALIAS(ncclGroupEnd);
NCCL_ALIAS(ncclGroupSimulateEnd);

} // extern "C"
