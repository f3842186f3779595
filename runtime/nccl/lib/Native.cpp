//===- Native.cpp - Collectives on mscclc's stdlib -------------------------===//

#include "Native.h"

#include "mscclc/floor/Shape.h"
#include "mscclc/runtime/CaptureMode.h"

namespace mscclc::nccl {
namespace {

/// NCCL's data types as mscclc's (same meaning, different numbering).
std::optional<mscclcDataType_t> mscclcType(int dtype) {
  std::optional<DataType> t = dataTypeOfNccl(dtype);
  return t ? std::optional(mscclcDataType_t(dataTypeInfo(*t).mscclc))
           : std::nullopt;
}

/// NCCL's built-in operators as mscclc's (Max and Min swap numbers).
std::optional<mscclcRedOp_t> mscclcOp(int op) {
  std::optional<RedOp> r = redOpOfNccl(op);
  return r ? std::optional(mscclcRedOp_t(redOpInfo(*r).mscclc))
           : std::nullopt;
}

/// Whether the buffers are NCCL's in-place layout for the collective.
bool inPlace(const CollectiveArgs &a, int rank) {
  const char *s = static_cast<const char *>(a.send);
  const char *r = static_cast<const char *>(a.recv);
  std::optional<mscclc::Collective> f = floorCollective(a.collective);
  if (!f)
    return s == r;
  size_t es = elementSize(a.dtype);
  switch (collectiveInfo(*f).inPlace) {
  case InPlace::InputInOutput:
    return s && s == r + inPlaceInputOffset(*f, a.count, rank) * es;
  case InPlace::OutputInInput:
    return r && r == s + inPlaceOutputOffset(*f, a.count, rank) * es;
  case InPlace::Same:
  case InPlace::Never:
    break;
  }
  return s == r;
}

struct NativeCall {
  mscclcCollective_t coll;
  mscclcDataType_t dtype;
  mscclcRedOp_t op;
};

/// The operator of a reducing call: a built-in one, or PreMulSum for an
/// operator of ncclRedOpCreatePreMulSum (its scalar travels in the args).
std::optional<mscclcRedOp_t> callOp(const CollectiveArgs &a) {
  if (a.op >= ncclNumOps)
    return a.premul ? std::optional(mscclcPreMulSum) : std::nullopt;
  return mscclcOp(a.op);
}

bool toNative(const CollectiveArgs &a, NativeCall *out, std::string *why) {
  std::optional<int> coll = mscclcCollective(a.collective);
  if (!coll) {
    *why = "point-to-point calls run on the fallback NCCL";
    return false;
  }
  std::optional<mscclcDataType_t> t = mscclcType(a.dtype);
  std::optional<mscclcRedOp_t> op =
      reduces(a.collective) ? callOp(a) : std::optional(mscclcSum);
  if (!t) {
    *why = fmt::format("mscclc has no {} type", dtypeName(a.dtype));
    return false;
  }
  if (!op) {
    *why = fmt::format("operator {} was not made on this communicator", a.op);
    return false;
  }
  *out = {mscclcCollective_t(*coll), *t, *op};
  return true;
}

} // namespace

bool nativeSupported(ncclComm *c, const CollectiveArgs &a, std::string *why) {
  if (!c->native) {
    *why = c->noNative;
    return false;
  }
  NativeCall n;
  if (!toNative(a, &n, why))
    return false;
  int supported = 0;
  mscclcResult_t r = mscclcCollectiveSupported(
      c->native, n.coll, a.count, n.dtype, n.op, a.root,
      inPlace(a, c->rank) ? 1 : 0, &supported);
  if (r != mscclcSuccess || !supported) {
    *why = mscclcGetLastError();
    return false;
  }
  return true;
}

Outcome runNative(ncclComm *c, const CollectiveArgs &a, cudaStream_t stream,
                  bool *ranNothing) {
  NativeCall n;
  std::string why;
  if (ranNothing)
    *ranNothing = false;
  if (!toNative(a, &n, &why))
    return {ncclInternalError, why};
  rt::RelaxedCapture relaxed; // a first call's set-up, maybe during capture
  mscclcResult_t r =
      n.op == mscclcPreMulSum
          ? mscclcRunCollectivePreMulSum(
                c->native, n.coll, a.send, a.recv, a.count, n.dtype,
                a.premul->deviceScalar ? a.premul->deviceScalar
                                       : a.premul->hostScalar.data(),
                a.premul->deviceScalar ? 1 : 0, a.root, stream)
      : a.direct
          ? mscclcRunCollectiveDirect(c->native, n.coll, a.send, a.recv,
                                      a.count, n.dtype, n.op, a.root, stream)
          : mscclcRunCollective(c->native, n.coll, a.send, a.recv, a.count,
                                n.dtype, n.op, a.root, stream);
  if (ranNothing)
    *ranNothing = r == mscclcUnsupported || r == mscclcCompileError;
  return fromMscclc(r, describeCall(a));
}

std::string nativeAlgorithm(ncclComm *c, const CollectiveArgs &a) {
  NativeCall n;
  std::string why;
  const char *name = nullptr;
  if (!toNative(a, &n, &why) ||
      mscclcCollectiveAlgorithm(c->native, n.coll, a.count, n.dtype, n.op,
                                a.root, inPlace(a, c->rank) ? 1 : 0,
                                &name) != mscclcSuccess ||
      !name)
    return "(unknown)";
  return name;
}

} // namespace mscclc::nccl
