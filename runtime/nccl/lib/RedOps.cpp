//===- RedOps.cpp - PreMulSum operators made at run time -------------------===//
//
// An operator is an id of the communicator it was made on (ncclNumOps and
// up), with its scalar. mscclc's stdlib runs it natively
// (mscclcRunCollectivePreMulSum: each rank's input scaled into the staging);
// the fallback NCCL gets the same operator on its communicator, so a call
// with it can also fall back. A call takes the operator's scalar when it is
// made, so an operator destroyed inside a group still serves the group's
// calls; its fallback counterpart is destroyed when the group ends.
//
//===----------------------------------------------------------------------===//

#include "Comm.h"
#include "Dispatch.h"
#include "Exports.h"
#include "SelfCalls.h"
#include "Validate.h"

#include <cstring>

using namespace mscclc::nccl;

extern "C" {

ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t *op, void *scalar,
                                   ncclDataType_t datatype,
                                   ncclScalarResidence_t residence,
                                   ncclComm_t comm) {
  MSCCLC_REAL_SELF_CALL(RedOpCreatePreMulSum, op, scalar, datatype,
                        residence, comm);
  const char *fn = "ncclRedOpCreatePreMulSum";
  ncclComm *c = nullptr;
  Outcome o = lookupComm(comm, fn, &c);
  if (!o.ok())
    return report(o);
  if (!op || !scalar)
    return fail(ncclInvalidArgument, fmt::format("{}: op and scalar must not be NULL", fn));
  size_t elem = elementSize(int(datatype));
  if (elem == 0)
    return fail(ncclInvalidArgument,
                fmt::format("{}: invalid data type {}", fn, int(datatype)));
  if (residence != ncclScalarDevice && residence != ncclScalarHostImmediate)
    return fail(ncclInvalidArgument,
                fmt::format("{}: invalid scalar residence {}", fn, int(residence)));
  PreMulSumOp made;
  made.dtype = int(datatype);
  made.residence = residence;
  if (residence == ncclScalarHostImmediate) {
    made.hostScalar.resize(elem);
    memcpy(made.hostScalar.data(), scalar, elem);
  } else {
    made.deviceScalar = scalar;
  }
  if (c->real) {
    ncclResult_t r = c->realLib->RedOpCreatePreMulSum(&made.realOp, scalar, datatype,
                                                   residence, c->real);
    if (r != ncclSuccess)
      return failOnFallback(c, fn, r);
    made.hasRealOp = true;
  }
  std::lock_guard<std::mutex> lock(c->mutex);
  if (c->nextOp == int(ncclMaxRedOp)) {
    return fail(ncclInvalidUsage, fmt::format("{}: no operator ids left", fn));
  }
  int id = c->nextOp++;
  c->ops.emplace(id, std::move(made));
  *op = ncclRedOp_t(id);
  return ncclSuccess;
}

ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  MSCCLC_REAL_SELF_CALL(RedOpDestroy, op, comm);
  const char *fn = "ncclRedOpDestroy";
  ncclComm *c = nullptr;
  Outcome o = lookupComm(comm, fn, &c);
  if (!o.ok())
    return report(o);
  PreMulSumOp gone;
  {
    std::lock_guard<std::mutex> lock(c->mutex);
    auto it = c->ops.find(int(op));
    if (it == c->ops.end())
      return fail(ncclInvalidArgument,
                  fmt::format("{}: operator {} was not made by "
                           "ncclRedOpCreatePreMulSum on this communicator "
                           "(or was destroyed)",
                           fn, int(op)));
    gone = std::move(it->second);
    c->ops.erase(it);
  }
  if (gone.hasRealOp && c->real) {
    if (inGroup()) {
      // The group's fallback calls run at its end and need it till then.
      ncclRedOp_t realOp = gone.realOp;
      deferUntilGroupEnd([c, realOp] {
        if (c->real)
          (void)c->realLib->RedOpDestroy(realOp, c->real);
      });
      return ncclSuccess;
    }
    ncclResult_t r = c->realLib->RedOpDestroy(gone.realOp, c->real);
    if (r != ncclSuccess)
      return failOnFallback(c, fn, r);
  }
  return ncclSuccess;
}

NCCL_ALIAS(ncclRedOpCreatePreMulSum);
NCCL_ALIAS(ncclRedOpDestroy);

} // extern "C"
