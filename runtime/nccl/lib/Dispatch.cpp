//===- Dispatch.cpp - Running one collective: checks, route, groups -------===//

#include "Dispatch.h"

#include "mscclc/floor/Shape.h"

#include "mscclc/runtime/CaptureMode.h"
#include "Native.h"

#include <nvtx3/nvToolsExt.h>

#include <utility>

namespace mscclc::nccl {
namespace {

struct QueuedCall {
  ncclComm *comm;
  CollectiveArgs args;
  cudaStream_t stream;
  Route route;
};

thread_local int groupDepth = 0;
thread_local std::vector<QueuedCall> queuedCalls;
thread_local std::vector<ncclComm *> pendingInits;
thread_local std::vector<std::thread> pendingTasks;
thread_local std::vector<std::function<void()>> afterGroup;
/// The first call of the open group that failed, and how many did: NCCL's
/// ncclGroupEnd returns that error and runs none of the group's calls, so a
/// caller who checks only ncclGroupEnd (as most do) learns of it.
thread_local Outcome groupError;
thread_local int groupFailures = 0;

/// AlltoAll, Gather and Scatter over grouped sends and receives, for a
/// fallback NCCL older than 2.28 (which lacks them).
ncclResult_t overSendRecv(ncclComm *c, const CollectiveArgs &a,
                          ncclDataType_t t, cudaStream_t s) {
  const RealNccl *n = c->realLib;
  size_t bytes = a.count * elementSize(a.dtype);
  auto sendAt = [&](int p) {
    return static_cast<const char *>(a.send) + size_t(p) * bytes;
  };
  auto recvAt = [&](int p) { return static_cast<char *>(a.recv) + size_t(p) * bytes; };
  bool isRoot = c->rank == a.root;
  ncclResult_t r = n->GroupStart();
  for (int p = 0; p < c->nranks && r == ncclSuccess; ++p) {
    switch (a.collective) {
    case Collective::AllToAll:
      r = n->Send(sendAt(p), a.count, t, p, c->real, s);
      if (r == ncclSuccess)
        r = n->Recv(recvAt(p), a.count, t, p, c->real, s);
      break;
    case Collective::Gather:
      if (p == 0)
        r = n->Send(a.send, a.count, t, a.root, c->real, s);
      if (r == ncclSuccess && isRoot)
        r = n->Recv(recvAt(p), a.count, t, p, c->real, s);
      break;
    case Collective::Scatter:
      if (isRoot)
        r = n->Send(sendAt(p), a.count, t, p, c->real, s);
      if (r == ncclSuccess && p == 0)
        r = n->Recv(a.recv, a.count, t, a.root, c->real, s);
      break;
    default: r = ncclInternalError; break;
    }
  }
  ncclResult_t end = n->GroupEnd();
  return r != ncclSuccess ? r : end;
}

Outcome runFallback(ncclComm *c, const CollectiveArgs &a, cudaStream_t s) {
  const RealNccl *n = c->realLib;
  ncclRedOp_t op = ncclRedOp_t(a.op);
  if (reduces(a.collective) && a.op >= ncclNumOps) {
    if (!a.premul || !a.premul->hasRealOp)
      return {ncclInternalError,
              fmt::format("{}: operator {} has no counterpart on the fallback "
                          "NCCL", describeCall(a), a.op)};
    op = a.premul->realOp;
  }
  ncclDataType_t t = ncclDataType_t(a.dtype);
  ncclComm_t rc = c->real;
  ncclResult_t r = ncclInternalError;
  switch (a.collective) {
  case Collective::AllReduce: r = n->AllReduce(a.send, a.recv, a.count, t, op, rc, s); break;
  case Collective::AllGather: r = n->AllGather(a.send, a.recv, a.count, t, rc, s); break;
  case Collective::ReduceScatter: r = n->ReduceScatter(a.send, a.recv, a.count, t, op, rc, s); break;
  case Collective::Broadcast: r = n->Broadcast(a.send, a.recv, a.count, t, a.root, rc, s); break;
  case Collective::Reduce: r = n->Reduce(a.send, a.recv, a.count, t, op, a.root, rc, s); break;
  case Collective::AllToAll:
    r = n->AlltoAll ? n->AlltoAll(a.send, a.recv, a.count, t, rc, s) : overSendRecv(c, a, t, s);
    break;
  case Collective::Gather:
    r = n->Gather ? n->Gather(a.send, a.recv, a.count, t, a.root, rc, s) : overSendRecv(c, a, t, s);
    break;
  case Collective::Scatter:
    r = n->Scatter ? n->Scatter(a.send, a.recv, a.count, t, a.root, rc, s) : overSendRecv(c, a, t, s);
    break;
  case Collective::Send: r = n->Send(a.send, a.count, t, a.root, rc, s); break;
  case Collective::Recv: r = n->Recv(a.recv, a.count, t, a.root, rc, s); break;
  }
  if (r == ncclSuccess || r == ncclInProgress)
    return Outcome::success();
  return {r, fmt::format("{} on the fallback NCCL: {} ({})", describeCall(a),
                         n->GetErrorString(r), n->GetLastError(nullptr))};
}

/// Whether a native call that failed without running anything may run on
/// the fallback instead (as it would have, had mscclc said so up front).
bool mayFallBackLate(const QueuedCall &q, const Outcome &native) {
  FallbackPolicy policy;
  (void)fallbackPolicy(&policy);
  if (!q.comm->real || policy.mode == FallbackPolicy::Mode::None)
    return false;
  logWarn(fmt::format("rank {}: {}; running it on the fallback NCCL",
                      q.comm->rank, native.message));
  return true;
}

Outcome execute(const QueuedCall &q) {
  if (q.route == Route::Fallback)
    return runFallback(q.comm, q.args, q.stream);
  bool ranNothing = false;
  Outcome o = runNative(q.comm, q.args, q.stream, &ranNothing);
  if (!o.ok() && ranNothing && mayFallBackLate(q, o))
    return runFallback(q.comm, q.args, q.stream);
  return o;
}

/// Whether `a` runs on the caller's buffers, with no staging copy: both lie
/// in symmetric windows (Registrations.h). Only collectives in which every
/// rank uses both buffers qualify, so every rank that keeps the windows'
/// contract decides alike; PreMulSum always stages its input.
bool runsDirect(ncclComm *c, const CollectiveArgs &a, std::string *why) {
  // The unrooted collectives (not Send, Recv nor a rooted one).
  std::optional<mscclc::Collective> coll = floorCollective(a.collective);
  bool everyRankUsesBoth = coll && !collectiveRooted(*coll);
  if (!everyRankUsesBoth || a.premul || c->nranks < 2)
    return false;
  mscclc::Collective f = *coll;
  size_t es = elementSize(a.dtype);
  size_t sendElems = inputElements(f, a.count, c->nranks);
  size_t recvElems = outputElements(f, a.count, c->nranks);
  std::lock_guard<std::mutex> lock(c->mutex);
  if (c->windowRanges.size() == 0)
    return false;
  std::string whySend, whyRecv;
  bool send = c->windowRanges.inSymmetricWindow(a.send, sendElems * es, &whySend);
  bool recv = c->windowRanges.inSymmetricWindow(a.recv, recvElems * es, &whyRecv);
  if (send && recv)
    return true;
  *why = !send ? "send buffer: " + whySend : "receive buffer: " + whyRecv;
  return false;
}

/// Logs, once per communicator, collective and power-of-two size bucket,
/// where a call ran.
void logRoute(ncclComm *c, const CollectiveArgs &a, Route route,
              const std::string &detail) {
  if (!infoEnabled())
    return;
  size_t bytes = a.count * elementSize(a.dtype);
  int bucket = bytes ? 64 - __builtin_clzll(bytes) : 0;
  {
    std::lock_guard<std::mutex> lock(c->mutex);
    // Direct and staged calls are told apart.
    int kind = int(a.collective) * 2 + (a.direct ? 1 : 0);
    if (!c->logged.insert({kind, bucket}).second)
      return;
  }
  std::string size = bucket ? fmt::format("{} to {} bytes", 1ull << (bucket - 1),
                                          (bucket == 64 ? ~0ull : (1ull << bucket) - 1))
                            : "0 bytes";
  const char *where = route == Route::Native     ? "mscclc"
                      : route == Route::Fallback ? "fallback NCCL"
                                                 : "refused";
  logInfo(fmt::format("rank {}/{}: nccl{} of {} ({}): {}: {}", c->rank,
                      c->nranks, collectiveName(a.collective), size,
                      describeCall(a), where, detail));
}

/// The NVTX range of one call, named like NCCL's.
struct NvtxRange {
  explicit NvtxRange(const char *name) { nvtxRangePushA(name); }
  ~NvtxRange() { nvtxRangePop(); }
};

ncclResult_t dispatchOne(const CollectiveArgs &call, ncclComm_t comm,
                        cudaStream_t stream) {
  std::string fn = fmt::format("nccl{}", collectiveName(call.collective));
  NvtxRange range(fn.c_str());
  ncclComm *c = nullptr;
  Outcome o = lookupComm(comm, fn.c_str(), &c);
  if (!o.ok())
    return report(o);
  CollectiveArgs a = call;
  bool opKnown = false;
  if (reduces(a.collective) && a.op >= ncclNumOps) {
    std::lock_guard<std::mutex> lock(c->mutex);
    auto it = c->ops.find(a.op);
    opKnown = it != c->ops.end();
    if (opKnown)
      a.premul = it->second;
  }
  o = checkArguments(a, c->rank, c->nranks, opKnown);
  if (!o.ok())
    return report(o);
  if (a.count == 0)
    return ncclSuccess; // NCCL launches nothing either
  FallbackPolicy policy;
  (void)fallbackPolicy(&policy); // a bad value already failed the init
  RouteInputs in;
  in.collective = a.collective;
  in.call = describeCall(a);
  in.nativeSupported = nativeSupported(c, a, &in.nativeMissing);
  in.hasFallback = c->real != nullptr;
  in.noFallback = c->noFallback;
  RouteDecision d = decideRoute(policy, in);
  std::string staged;
  if (d.route == Route::Native)
    a.direct = runsDirect(c, a, &staged);
  if (d.route == Route::Refuse) {
    logRoute(c, a, d.route, d.message);
    return fail(ncclInvalidUsage, d.message);
  }
  if (infoEnabled())
    logRoute(c, a, d.route,
             d.route == Route::Native
                 ? nativeAlgorithm(c, a) +
                       (a.direct ? " on the caller's buffers (symmetric "
                                   "windows, no staging copy)"
                        : staged.empty() ? std::string()
                                         : ", staged: " + staged)
                 : fmt::format("NCCL {} ({}) because {}", c->realLib->version,
                               c->realLib->path,
                               in.nativeSupported ? "MSCCLC_NCCL_FALLBACK says so"
                                                  : in.nativeMissing));
  QueuedCall q{c, a, stream, d.route};
  if (groupDepth > 0) {
    queuedCalls.push_back(q);
    return ncclSuccess;
  }
  return report(execute(q));
}

} // namespace

ncclResult_t dispatch(const CollectiveArgs &call, ncclComm_t comm,
                      cudaStream_t stream) {
  ncclResult_t r = dispatchOne(call, comm, stream);
  if (groupDepth > 0 && r != ncclSuccess) {
    if (groupFailures++ == 0)
      groupError = {r, lastErrorMessage()};
  }
  return r;
}

bool inGroup() { return groupDepth > 0; }

void deferInit(ncclComm *c) { pendingInits.push_back(c); }

void deferTask(std::thread t) { pendingTasks.push_back(std::move(t)); }

void deferUntilGroupEnd(std::function<void()> fn) {
  afterGroup.push_back(std::move(fn));
}

ncclResult_t groupStart() {
  ++groupDepth;
  return ncclSuccess;
}

ncclResult_t groupEnd(ncclSimInfo_t *simulate) {
  const char *fn = simulate ? "ncclGroupSimulateEnd" : "ncclGroupEnd";
  if (groupDepth == 0)
    return fail(ncclInvalidUsage,
                fmt::format("{}: no group is open (ncclGroupStart was not "
                            "called)", fn));
  if (simulate && (simulate->magic != NCCL_SIM_INFO_MAGIC ||
                   simulate->size < sizeof(ncclSimInfo_t)))
    return fail(ncclInvalidArgument,
                fmt::format("{}: the ncclSimInfo_t was not initialised with "
                            "NCCL_SIM_INFO_INITIALIZER", fn));
  if (--groupDepth > 0)
    return ncclSuccess;
  // What waited for the group's calls (fallback operators destroyed inside
  // it) runs however the group ends.
  struct RunAfterGroup {
    std::vector<std::function<void()>> fns;
    ~RunAfterGroup() {
      for (auto &fn : fns)
        fn();
    }
  } runAfterGroup;
  runAfterGroup.fns.swap(afterGroup);
  std::vector<ncclComm *> inits;
  inits.swap(pendingInits);
  std::vector<QueuedCall> calls;
  calls.swap(queuedCalls);
  std::vector<std::thread> tasks;
  tasks.swap(pendingTasks);
  Outcome failedCall = std::exchange(groupError, Outcome::success());
  int failures = std::exchange(groupFailures, 0);
  for (std::thread &t : tasks)
    t.join();
  // Communicators initialised in the group: theirs ran on threads of their
  // own (ranks of one communicator driven from this thread wait for each
  // other), and the group ends when they are done.
  Outcome first;
  for (ncclComm *c : inits) {
    if (!c->settings.blocking)
      continue;
    Outcome o = waitInit(c);
    if (!o.ok() && first.ok())
      first = o;
  }
  if (!first.ok())
    return report(first);
  if (!failedCall.ok())
    return fail(failedCall.result,
                fmt::format("{}: {} of the group's calls failed and none of "
                            "its {} queued calls ran; the first: {}",
                            fn, failures, calls.size(), failedCall.message));

  const RealNccl *real = nullptr;
  bool anyNative = false;
  for (const QueuedCall &q : calls) {
    if (q.route == Route::Fallback)
      real = q.comm->realLib;
    else
      anyNative = true;
  }
  if (simulate) {
    // Nothing runs; only the fallback can estimate its part.
    simulate->estimatedTime = NCCL_UNDEF_FLOAT;
    if (real && real->GroupSimulateEnd) {
      ncclResult_t r = real->GroupStart();
      for (const QueuedCall &q : calls)
        if (q.route == Route::Fallback && r == ncclSuccess)
          r = runFallback(q.comm, q.args, q.stream).result;
      ncclResult_t e = real->GroupSimulateEnd(simulate);
      return r != ncclSuccess ? r : e;
    }
    return ncclSuccess;
  }
  if (anyNative) {
    (void)mscclcGroupStart();
    for (QueuedCall &q : calls) {
      if (q.route != Route::Native || !first.ok())
        continue;
      bool ranNothing = false;
      Outcome o = runNative(q.comm, q.args, q.stream, &ranNothing);
      if (!o.ok() && ranNothing && mayFallBackLate(q, o)) {
        q.route = Route::Fallback; // joins the fallback's group below
        real = q.comm->realLib;
      } else {
        first = o;
      }
    }
    rt::RelaxedCapture relaxed; // the group's set-up, maybe during capture
    Outcome end = fromMscclc(mscclcGroupEnd(), "ncclGroupEnd (mscclc's group)");
    if (first.ok())
      first = end;
  }
  if (real) {
    ncclResult_t r = real->GroupStart();
    for (const QueuedCall &q : calls)
      if (q.route == Route::Fallback && r == ncclSuccess) {
        Outcome o = runFallback(q.comm, q.args, q.stream);
        r = o.result;
        if (!o.ok() && first.ok())
          first = o;
      }
    ncclResult_t e = real->GroupEnd();
    if (e != ncclSuccess && e != ncclInProgress && first.ok())
      first = {e, fmt::format("ncclGroupEnd of the fallback NCCL: {}",
                              real->GetLastError(nullptr))};
  }
  return report(first);
}

} // namespace mscclc::nccl
