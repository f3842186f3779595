//===- Setup.cpp - Version, errors, and making and ending communicators ---===//

#include "Dispatch.h"
#include "Exports.h"
#include "SelfCalls.h"
#include "mscclc/runtime/BootstrapWire.h"

#include "mscclc/runtime/Limits.h"

#include <algorithm>
#include <cstring>

using namespace mscclc::nccl;
namespace rt = mscclc::rt;

namespace {

/// Starts the initialisation of a new communicator: on this thread, or on
/// its own inside a group and for non-blocking ones. Returns what NCCL
/// returns: ncclInProgress for a non-blocking communicator.
ncclResult_t launchInit(ncclComm *c, const rt::UniqueId &id, ncclComm_t *out) {
  bool grouped = inGroup();
  bool onThread = grouped || !c->settings.blocking;
  *out = c;
  startInit(c, id, onThread);
  if (grouped)
    deferInit(c);
  if (onThread)
    return c->settings.blocking ? ncclSuccess : ncclInProgress;
  Outcome o = c->initOutcome;
  if (!o.ok()) {
    *out = nullptr;
    (void)destroyComm(c, false);
    return report(o);
  }
  return ncclSuccess;
}

ncclResult_t initRank(const char *fn, ncclComm_t *comm, int nranks,
                      const rt::UniqueId &id, int rank,
                      const ncclConfig_t *config) {
  if (!comm)
    return fail(ncclInvalidArgument, fmt::format("{}: comm is NULL", fn));
  *comm = nullptr;
  // Above the limit the bootstrap's tables alone would take gigabytes.
  if (nranks < 1 || nranks > mscclc::limits::kMaxRanks)
    return fail(ncclInvalidArgument,
                fmt::format("{}: nranks is {}, expected 1 to {}", fn, nranks,
                            mscclc::limits::kMaxRanks));
  if (rank < 0 || rank >= nranks)
    return fail(ncclInvalidArgument,
                fmt::format("{}: rank {} is not in [0, {})", fn, rank, nranks));
  CommSettings settings;
  Outcome o = readConfig(config, &settings);
  if (!o.ok())
    return report({o.result, fmt::format("{}: {}", fn, o.message)});
  FallbackPolicy policy;
  o = fallbackPolicy(&policy);
  if (!o.ok())
    return report(o);
  int device = 0;
  o = fromCuda(cudaGetDevice(&device), fmt::format("{}: cudaGetDevice", fn));
  if (!o.ok())
    return report(o);
  return launchInit(newComm(rank, nranks, device, settings), id, comm);
}

rt::UniqueId toInternal(const ncclUniqueId &id) {
  rt::UniqueId u;
  static_assert(sizeof(u.bytes) == sizeof(id.internal), "id size");
  memcpy(u.bytes, id.internal, sizeof(u.bytes));
  return u;
}

/// One rank's part of ncclCommSplit's exchange.
struct SplitEntry {
  int32_t color = 0;
  int32_t key = 0;
  int32_t madeId = 0;
  char id[128] = {};
};

/// The split's exchange over the parent's bootstrap: every rank's colour and
/// key, then the id each new communicator's first rank made. Fills the new
/// rank, size and id of this rank's colour.
Outcome splitExchange(ncclComm *parent, int color, int key, int *newRank,
                      int *newSize, rt::UniqueId *id) {
  std::vector<SplitEntry> all(size_t(parent->nranks));
  all[size_t(parent->rank)].color = color;
  all[size_t(parent->rank)].key = key;
  rt::Status s = parent->bootstrap->allGather(all.data(), sizeof(SplitEntry));
  if (!s.isOk())
    return {ncclSystemError, "ncclCommSplit: exchanging colours: " + s.message()};
  std::vector<int> members;
  for (int r = 0; r < parent->nranks; ++r)
    if (all[size_t(r)].color == color)
      members.push_back(r);
  std::stable_sort(members.begin(), members.end(), [&](int a, int b) {
    return all[size_t(a)].key < all[size_t(b)].key;
  });
  bool leader = color != NCCL_SPLIT_NOCOLOR && members.front() == parent->rank;
  SplitEntry &mine = all[size_t(parent->rank)];
  std::string failure;
  if (leader) {
    rt::UniqueId made;
    rt::Status m = rt::createUniqueId(&made);
    mine.madeId = m.isOk();
    failure = m.message();
    memcpy(mine.id, made.bytes, sizeof(mine.id));
  }
  s = parent->bootstrap->allGather(all.data(), sizeof(SplitEntry));
  if (!s.isOk())
    return {ncclSystemError, "ncclCommSplit: sharing the new ids: " + s.message()};
  if (color == NCCL_SPLIT_NOCOLOR)
    return Outcome::success();
  const SplitEntry &lead = all[size_t(members.front())];
  if (!lead.madeId)
    return {ncclSystemError,
            leader ? "ncclCommSplit: " + failure
                   : fmt::format("ncclCommSplit: rank {} could not make the "
                              "new communicator's id",
                              members.front())};
  *newRank = int(std::find(members.begin(), members.end(), parent->rank) -
                 members.begin());
  *newSize = int(members.size());
  memcpy(id->bytes, lead.id, sizeof(id->bytes));
  return Outcome::success();
}

/// Runs the split's exchange and the new communicator's initialisation; on
/// the calling thread, or (inside a group, or non-blocking) on another.
ncclResult_t split(ncclComm *parent, int color, int key, ncclComm_t *newcomm,
                   const CommSettings &settings) {
  bool onThread = inGroup() || !settings.blocking;
  if (color == NCCL_SPLIT_NOCOLOR) {
    auto part = [parent, key] {
      int r = 0, n = 0;
      rt::UniqueId id;
      Outcome o = splitExchange(parent, NCCL_SPLIT_NOCOLOR, key, &r, &n, &id);
      if (!o.ok())
        report(o);
      return o;
    };
    if (!onThread)
      return report(part());
    if (inGroup())
      deferTask(std::thread(part));
    else
      std::thread(part).join(); // non-blocking and no communicator to poll
    return ncclSuccess;
  }
  // The new communicator's rank and size are known after the exchange;
  // until then the handle is live and its users wait for it.
  ncclComm *c = newComm(0, 1, parent->device, settings);
  if (parent->native)
    (void)mscclcCommNode(parent->native, &c->node);
  auto body = [parent, color, key, c] {
    rt::UniqueId id;
    Outcome o = splitExchange(parent, color, key, &c->rank, &c->nranks, &id);
    if (o.ok())
      o = initComm(c, id);
    finishInit(c, o);
  };
  *newcomm = c;
  if (onThread) {
    c->initThread = std::thread(body);
    if (inGroup())
      deferInit(c);
    return settings.blocking ? ncclSuccess : ncclInProgress;
  }
  body();
  Outcome o = c->initOutcome;
  if (!o.ok()) {
    *newcomm = nullptr;
    (void)destroyComm(c, false);
    return report(o);
  }
  return ncclSuccess;
}

} // namespace

extern "C" {

ncclResult_t ncclGetVersion(int *version) {
  MSCCLC_REAL_SELF_CALL(GetVersion, version);
  if (!version)
    return fail(ncclInvalidArgument, "ncclGetVersion: version is NULL");
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

/// The caller's value is read as an int: a C caller may pass any number,
/// and loading one that no enumerator covers as an ncclResult_t is
/// undefined behaviour in C++.
const char *ncclGetErrorString(ncclResult_t result) {
  MSCCLC_REAL_SELF_CALL(GetErrorString, result);
  int code;
  memcpy(&code, &result, sizeof(code));
  static_assert(sizeof(code) == sizeof(result), "ncclResult_t is an int");
  return resultCodeString(code);
}

/// NCCL keeps one message per thread, whatever the communicator.
const char *ncclGetLastError(ncclComm_t comm) {
  MSCCLC_REAL_SELF_CALL(GetLastError, comm);
  return lastErrorMessage();
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *uniqueId) {
  MSCCLC_REAL_SELF_CALL(GetUniqueId, uniqueId);
  if (!uniqueId)
    return fail(ncclInvalidArgument, "ncclGetUniqueId: uniqueId is NULL");
  rt::UniqueId u;
  rt::Status s = rt::createUniqueId(&u);
  if (!s.isOk())
    return fail(ncclSystemError, "ncclGetUniqueId: " + s.message());
  memcpy(uniqueId->internal, u.bytes, sizeof(u.bytes));
  return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId,
                           int rank) {
  MSCCLC_REAL_SELF_CALL(CommInitRank, comm, nranks, commId, rank);
  return initRank("ncclCommInitRank", comm, nranks, toInternal(commId), rank,
                  nullptr);
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks,
                                 ncclUniqueId commId, int rank,
                                 ncclConfig_t *config) {
  MSCCLC_REAL_SELF_CALL(CommInitRankConfig, comm, nranks, commId, rank,
                        config);
  return initRank("ncclCommInitRankConfig", comm, nranks, toInternal(commId),
                  rank, config);
}

/// NCCL spreads its bootstrap over several roots; every rank here joins the
/// root of the first id (its maker keeps it open until all ranks came).
ncclResult_t ncclCommInitRankScalable(ncclComm_t *newcomm, int nranks,
                                   int myrank, int nId,
                                   ncclUniqueId *commIds,
                                   ncclConfig_t *config) {
  MSCCLC_REAL_SELF_CALL(CommInitRankScalable, newcomm, nranks, myrank, nId,
                        commIds, config);
  if (nId < 1 || !commIds)
    return fail(ncclInvalidArgument,
                fmt::format("ncclCommInitRankScalable: {} ids at {}: at least "
                         "one id expected",
                         nId, static_cast<const void *>(commIds)));
  return initRank("ncclCommInitRankScalable", newcomm, nranks,
                  toInternal(commIds[0]), myrank, config);
}

ncclResult_t ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist) {
  MSCCLC_REAL_SELF_CALL(CommInitAll, comms, ndev, devlist);
  const char *fn = "ncclCommInitAll";
  if (!comms)
    return fail(ncclInvalidArgument, fmt::format("{}: comms is NULL", fn));
  if (ndev < 1)
    return fail(ncclInvalidArgument,
                fmt::format("{}: ndev is {}, at least 1 expected", fn, ndev));
  int count = 0;
  Outcome o = fromCuda(cudaGetDeviceCount(&count), fmt::format("{}: cudaGetDeviceCount", fn));
  if (!o.ok())
    return report(o);
  std::vector<int> devices;
  for (int i = 0; i < ndev; ++i) {
    int d = devlist ? devlist[i] : i;
    if (d < 0 || d >= count)
      return fail(ncclInvalidArgument,
                  fmt::format("{}: device {} (entry {}) does not exist ({} "
                           "devices)",
                           fn, d, i, count));
    if (std::count(devices.begin(), devices.end(), d)) {
      bool allowed = false;
      if (o = sharedGpuAllowed(&allowed); !o.ok())
        return report(o);
      if (!allowed)
        return fail(ncclInvalidUsage,
                    fmt::format("{}: device {} is listed twice; several ranks "
                                "on one GPU are allowed only for tests, with "
                                "MSCCLC_ALLOW_SHARED_GPU=1",
                                fn, d));
    }
    devices.push_back(d);
  }
  FallbackPolicy policy;
  o = fallbackPolicy(&policy);
  if (!o.ok())
    return report(o);
  rt::UniqueId id;
  rt::Status s = rt::createUniqueId(&id);
  if (!s.isOk())
    return fail(ncclSystemError, fmt::format("{}: {}", fn, s.message()));
  std::vector<ncclComm *> made;
  for (int i = 0; i < ndev; ++i) {
    made.push_back(newComm(i, ndev, devices[size_t(i)], CommSettings()));
    startInit(made.back(), id, true);
  }
  Outcome first;
  for (ncclComm *c : made) {
    Outcome r = waitInit(c);
    if (!r.ok() && first.ok())
      first = r;
  }
  if (!first.ok()) {
    for (ncclComm *c : made)
      (void)destroyComm(c, false);
    return report(first);
  }
  for (int i = 0; i < ndev; ++i)
    comms[i] = made[size_t(i)];
  return ncclSuccess;
}

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key,
                        ncclComm_t *newcomm, ncclConfig_t *config) {
  MSCCLC_REAL_SELF_CALL(CommSplit, comm, color, key, newcomm, config);
  const char *fn = "ncclCommSplit";
  ncclComm *c = nullptr;
  Outcome o = lookupComm(comm, fn, &c);
  if (!o.ok())
    return report(o);
  if (!newcomm)
    return fail(ncclInvalidArgument, fmt::format("{}: newcomm is NULL", fn));
  *newcomm = nullptr;
  if (color < 0 && color != NCCL_SPLIT_NOCOLOR)
    return fail(ncclInvalidArgument,
                fmt::format("{}: color {} is negative and not "
                         "NCCL_SPLIT_NOCOLOR",
                         fn, color));
  if (!c->bootstrap)
    return fail(ncclInvalidUsage,
                fmt::format("{}: this communicator came from ncclCommShrink "
                         "with excluded ranks and has no mscclc part to "
                         "split",
                         fn));
  CommSettings settings = c->settings;
  if (config) {
    o = readConfig(config, &settings);
    if (!o.ok())
      return report({o.result, fmt::format("{}: {}", fn, o.message)});
  }
  return split(c, color, key, newcomm, settings);
}

ncclResult_t ncclCommShrink(ncclComm_t comm, int *excludeRanksList,
                         int excludeRanksCount, ncclComm_t *newcomm,
                         ncclConfig_t *config, int shrinkFlags) {
  MSCCLC_REAL_SELF_CALL(CommShrink, comm, excludeRanksList,
                        excludeRanksCount, newcomm, config, shrinkFlags);
  const char *fn = "ncclCommShrink";
  ncclComm *c = nullptr;
  Outcome o = lookupComm(comm, fn, &c);
  if (!o.ok())
    return report(o);
  if (!newcomm || (excludeRanksCount > 0 && !excludeRanksList) ||
      excludeRanksCount < 0)
    return fail(ncclInvalidArgument,
                fmt::format("{}: newcomm is NULL or the exclusion list is "
                         "invalid",
                         fn));
  *newcomm = nullptr;
  if (shrinkFlags & ~NCCL_SHRINK_ABORT)
    return fail(ncclInvalidArgument,
                fmt::format("{}: unknown flags {:#x}", fn, shrinkFlags));
  std::set<int> excluded;
  for (int i = 0; i < excludeRanksCount; ++i) {
    int r = excludeRanksList[i];
    if (r < 0 || r >= c->nranks || !excluded.insert(r).second)
      return fail(ncclInvalidArgument,
                  fmt::format("{}: excluded rank {} is out of range or listed "
                           "twice",
                           fn, r));
  }
  if (excluded.count(c->rank))
    return fail(ncclInvalidArgument,
                fmt::format("{}: this rank ({}) is in the exclusion list: "
                         "excluded ranks do not call ncclCommShrink",
                         fn, c->rank));
  CommSettings settings = c->settings;
  if (config) {
    o = readConfig(config, &settings);
    if (!o.ok())
      return report({o.result, fmt::format("{}: {}", fn, o.message)});
  }
  if ((shrinkFlags & NCCL_SHRINK_ABORT) && c->native)
    (void)mscclcCommAbort(c->native);
  // Every rank takes part: a split of one colour, fully native.
  if (excluded.empty() && c->bootstrap)
    return split(c, 0, c->rank, newcomm, settings);
  // The excluded ranks may be gone, so our bootstrap cannot run; only the
  // real NCCL can make the smaller communicator.
  if (!c->real || !c->realLib->CommShrink)
    return fail(ncclInvalidUsage,
                fmt::format("{}: excluding ranks needs a fallback NCCL with "
                         "ncclCommShrink (2.27 or later), and {}",
                         fn,
                         c->real ? "the fallback lacks it" : c->noFallback));
  ncclComm_t real = nullptr;
  FallbackConfig raw(settings.raw);
  raw.config.blocking = 1;
  ncclResult_t r = c->realLib->CommShrink(c->real, excludeRanksList,
                                       excludeRanksCount, &real, &raw.config,
                                       shrinkFlags);
  if (r != ncclSuccess)
    return failOnFallback(c, fn, r);
  int below = int(std::count_if(excluded.begin(), excluded.end(),
                             [&](int e) { return e < c->rank; }));
  ncclComm *made = newComm(c->rank - below, c->nranks - excludeRanksCount,
                        c->device, settings);
  made->real = real;
  made->realLib = c->realLib;
  made->noNative = "the communicator came from ncclCommShrink with excluded "
                   "ranks, which only the fallback NCCL serves";
  made->initDone = true;
  *newcomm = made;
  return ncclSuccess;
}

ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  MSCCLC_REAL_SELF_CALL(CommFinalize, comm);
  ncclComm *c = nullptr;
  Outcome o = lookupComm(comm, "ncclCommFinalize", &c);
  if (!o.ok())
    return report(o);
  if (c->real) {
    ncclResult_t r = c->realLib->CommFinalize(c->real);
    if (r != ncclSuccess && r != ncclInProgress)
      return failOnFallback(c, "ncclCommFinalize", r);
  }
  return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  MSCCLC_REAL_SELF_CALL(CommDestroy, comm);
  if (!comm)
    return ncclSuccess; // as NCCL
  ncclComm *c = nullptr;
  Outcome o = lookupCommNoWait(comm, "ncclCommDestroy", &c);
  if (!o.ok())
    return report(o);
  return report(destroyComm(c, false));
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
  MSCCLC_REAL_SELF_CALL(CommAbort, comm);
  if (!comm)
    return ncclSuccess; // as NCCL
  ncclComm *c = nullptr;
  Outcome o = lookupCommNoWait(comm, "ncclCommAbort", &c);
  if (!o.ok())
    return report(o);
  return report(destroyComm(c, true));
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError) {
  MSCCLC_REAL_SELF_CALL(CommGetAsyncError, comm, asyncError);
  const char *fn = "ncclCommGetAsyncError";
  ncclComm *c = nullptr;
  Outcome o = lookupCommNoWait(comm, fn, &c);
  if (!o.ok())
    return report(o);
  if (!asyncError)
    return fail(ncclInvalidArgument, fmt::format("{}: asyncError is NULL", fn));
  {
    std::lock_guard<std::mutex> lock(c->mutex);
    if (!c->initDone) {
      *asyncError = ncclInProgress;
      return ncclSuccess;
    }
    if (!c->initOutcome.ok()) {
      // It failed on another thread: give this one its message.
      *asyncError = c->initOutcome.result;
      remember(c->initOutcome);
      return ncclSuccess;
    }
  }
  Outcome found = nativeAsyncError(c);
  if (found.ok() && c->real) {
    ncclResult_t r = ncclSuccess;
    if (c->realLib->CommGetAsyncError(c->real, &r) == ncclSuccess &&
        r != ncclSuccess && r != ncclInProgress)
      found = {r, fmt::format("the fallback NCCL: {}",
                           c->realLib->GetLastError(nullptr))};
  }
  std::lock_guard<std::mutex> lock(c->mutex);
  if (c->asyncError.ok() && !found.ok())
    c->asyncError = found;
  *asyncError = c->asyncError.result;
  remember(c->asyncError); // ncclGetLastError gives the reason
  return ncclSuccess;
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int *count) {
  MSCCLC_REAL_SELF_CALL(CommCount, comm, count);
  ncclComm *c = nullptr;
  Outcome o = lookupComm(comm, "ncclCommCount", &c);
  if (!o.ok())
    return report(o);
  if (!count)
    return fail(ncclInvalidArgument, "ncclCommCount: count is NULL");
  *count = c->nranks;
  return ncclSuccess;
}

ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int *device) {
  MSCCLC_REAL_SELF_CALL(CommCuDevice, comm, device);
  ncclComm *c = nullptr;
  Outcome o = lookupComm(comm, "ncclCommCuDevice", &c);
  if (!o.ok())
    return report(o);
  if (!device)
    return fail(ncclInvalidArgument, "ncclCommCuDevice: device is NULL");
  *device = c->device;
  return ncclSuccess;
}

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank) {
  MSCCLC_REAL_SELF_CALL(CommUserRank, comm, rank);
  ncclComm *c = nullptr;
  Outcome o = lookupComm(comm, "ncclCommUserRank", &c);
  if (!o.ok())
    return report(o);
  if (!rank)
    return fail(ncclInvalidArgument, "ncclCommUserRank: rank is NULL");
  *rank = c->rank;
  return ncclSuccess;
}

ncclResult_t ncclCommSuspend(ncclComm_t comm, int flags) {
  MSCCLC_REAL_SELF_CALL(CommSuspend, comm, flags);
  ncclComm *c = nullptr;
  Outcome o = lookupComm(comm, "ncclCommSuspend", &c);
  if (!o.ok())
    return report(o);
  if (!c->real || !c->realLib->CommSuspend)
    return fail(ncclInvalidUsage,
                "ncclCommSuspend is an NCCL 2.29.7 function: mscclc implements "
                "NCCL 2.28 and forwards it only to a fallback NCCL that has "
                "it, which this communicator lacks");
  return c->realLib->CommSuspend(c->real, flags);
}

ncclResult_t ncclCommResume(ncclComm_t comm) {
  MSCCLC_REAL_SELF_CALL(CommResume, comm);
  ncclComm *c = nullptr;
  Outcome o = lookupComm(comm, "ncclCommResume", &c);
  if (!o.ok())
    return report(o);
  if (!c->real || !c->realLib->CommResume)
    return fail(ncclInvalidUsage,
                "ncclCommResume is an NCCL 2.29.7 function: mscclc implements "
                "NCCL 2.28 and forwards it only to a fallback NCCL that has "
                "it, which this communicator lacks");
  return c->realLib->CommResume(c->real);
}

ncclResult_t ncclDevCommCreate(ncclComm_t comm,
                            const struct ncclDevCommRequirements *reqs,
                            struct ncclDevComm *outDevComm) {
  MSCCLC_REAL_SELF_CALL(DevCommCreate, comm, reqs, outDevComm);
  ncclComm *c = nullptr;
  Outcome o = lookupComm(comm, "ncclDevCommCreate", &c);
  if (!o.ok())
    return report(o);
  if (!reqs || !outDevComm)
    return fail(ncclInvalidArgument,
                "ncclDevCommCreate: reqs and outDevComm must not be NULL");
  if (!c->real || !c->realLib->DevCommCreate)
    return fail(ncclInvalidUsage,
                "ncclDevCommCreate (NCCL's device API) is forwarded only to a "
                "fallback NCCL that has it, which this communicator lacks: "
                "mscclc's kernels do not run NCCL's device library");
  return c->realLib->DevCommCreate(c->real, reqs, outDevComm);
}

ncclResult_t ncclDevCommDestroy(ncclComm_t comm,
                             const struct ncclDevComm *devComm) {
  MSCCLC_REAL_SELF_CALL(DevCommDestroy, comm, devComm);
  ncclComm *c = nullptr;
  Outcome o = lookupComm(comm, "ncclDevCommDestroy", &c);
  if (!o.ok())
    return report(o);
  if (!devComm)
    return fail(ncclInvalidArgument, "ncclDevCommDestroy: devComm is NULL");
  if (!c->real || !c->realLib->DevCommDestroy)
    return fail(ncclInvalidUsage,
                "ncclDevCommDestroy (NCCL's device API) is forwarded only to "
                "a fallback NCCL that has it, which this communicator lacks");
  return c->realLib->DevCommDestroy(c->real, devComm);
}

NCCL_ALIAS(ncclGetVersion);
NCCL_ALIAS(ncclGetErrorString);
NCCL_ALIAS(ncclGetLastError);
NCCL_ALIAS(ncclGetUniqueId);
NCCL_ALIAS(ncclCommInitRank);
NCCL_ALIAS(ncclCommInitRankConfig);
NCCL_ALIAS(ncclCommInitRankScalable);
NCCL_ALIAS(ncclCommInitAll);
NCCL_ALIAS(ncclCommSplit);
NCCL_ALIAS(ncclCommShrink);
NCCL_ALIAS(ncclCommFinalize);
NCCL_ALIAS(ncclCommDestroy);
NCCL_ALIAS(ncclCommAbort);
NCCL_ALIAS(ncclCommGetAsyncError);
NCCL_ALIAS(ncclCommCount);
NCCL_ALIAS(ncclCommCuDevice);
NCCL_ALIAS(ncclCommUserRank);
NCCL_ALIAS(ncclCommSuspend);
NCCL_ALIAS(ncclCommResume);
NCCL_ALIAS(ncclDevCommCreate);
NCCL_ALIAS(ncclDevCommDestroy);

} // extern "C"
