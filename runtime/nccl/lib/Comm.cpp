//===- Comm.cpp - The communicator behind an ncclComm_t -------------------===//

#include "Comm.h"

#include "mscclc/runtime/CaptureMode.h"
#include "mscclc/runtime/Settings.h"
#include "Validate.h"

#include <cstdlib>
#include <cstring>

namespace mscclc::nccl {
namespace {

std::mutex liveMutex;
std::set<ncclComm *> &liveComms() {
  static std::set<ncclComm *> live;
  return live;
}

Outcome fromStatus(const rt::Status &s, std::string_view what) {
  if (s.isOk())
    return Outcome::success();
  ncclResult_t code = ncclSystemError;
  if (s.code() == rt::Code::Timeout)
    code = ncclRemoteError;
  else if (s.code() == rt::Code::InvalidArgument)
    code = ncclInvalidArgument;
  return {code, fmt::format("{}: {}", what, s.message())};
}

/// One rank's part of an id hand-out: rank 0 says whether it made the id,
/// so that its failure reaches every rank instead of leaving them waiting.
struct IdMessage {
  int32_t ok = 0;
  char id[128] = {};
};
static_assert(sizeof(ncclUniqueId) == sizeof(IdMessage::id), "id size");
static_assert(sizeof(mscclcUniqueId) == sizeof(IdMessage::id), "id size");

/// Rank 0 runs `make` (which fills the 128 bytes or fails with a message);
/// every rank gets the bytes or rank 0's failure.
template <typename Make>
Outcome shareId(ncclComm *c, const char *what, Make make, char out[128]) {
  std::vector<IdMessage> all(size_t(c->nranks));
  std::string failure;
  if (c->rank == 0) {
    Outcome made = make(all[0].id);
    all[0].ok = made.ok();
    failure = made.message;
  }
  Outcome sent = fromStatus(c->bootstrap->allGather(all.data(), sizeof(IdMessage)),
                            fmt::format("sharing the {} id", what));
  if (!sent.ok())
    return sent;
  if (!all[0].ok)
    return {ncclSystemError,
            c->rank == 0 ? failure
                         : fmt::format("rank 0 could not make the {} id", what)};
  memcpy(out, all[0].id, 128);
  return Outcome::success();
}

/// This rank's GPU and whether it has a real NCCL, as the others see it.
struct RankInfo {
  char uuid[16] = {};
  int32_t device = -1;
  int32_t hasReal = 0;
};

/// The thread blocks per rank mscclc's kernels may use: the config's
/// maxCTAs, else NCCL_MAX_CTAS, else 0 (no limit).
Outcome maxBlocks(const CommSettings &s, int *out) {
  if (s.maxCTAs != NCCL_CONFIG_UNDEF_INT) {
    *out = s.maxCTAs;
    return Outcome::success();
  }
  int64_t blocks = 0;
  Outcome o = fromStatus(rt::get(rt::setting::NcclMaxCtas, &blocks),
                         "reading the environment");
  *out = int(blocks);
  return o;
}

Outcome initNative(ncclComm *c) {
  // Read before the first collective step: a rank whose value is bad stops
  // before the others wait for it.
  int blocks = 0;
  Outcome o = maxBlocks(c->settings, &blocks);
  if (!o.ok())
    return o;
  mscclcUniqueId id;
  o = shareId(
      c, "mscclc communicator",
      [](char *bytes) {
        mscclcUniqueId made;
        Outcome r = fromMscclc(mscclcGetUniqueId(&made), "mscclcGetUniqueId");
        memcpy(bytes, made.internal, sizeof(made.internal));
        return r;
      },
      id.internal);
  if (!o.ok())
    return o;
  o = fromMscclc(
      mscclcCommInitRankOnNode(&c->native, c->nranks, id, c->rank, c->node),
      "mscclcCommInitRankOnNode");
  if (!o.ok())
    return o;
  // Collective: every rank passes its limit, 0 for none.
  return fromMscclc(mscclcCommSetMaxBlocks(c->native, blocks),
                    "mscclcCommSetMaxBlocks");
}

/// Makes the real NCCL's communicator; a failure leaves the communicator
/// without a fallback (noFallback says why), it does not fail the init.
Outcome initFallback(ncclComm *c, const RealNccl *real) {
  ncclUniqueId id;
  Outcome o = shareId(
      c, "fallback NCCL",
      [real](char *bytes) {
        ncclUniqueId made;
        ncclResult_t r = real->GetUniqueId(&made);
        memcpy(bytes, made.internal, sizeof(made.internal));
        if (r != ncclSuccess)
          return Outcome{r, fmt::format("the real NCCL's ncclGetUniqueId: {}",
                                        real->GetErrorString(r))};
        return Outcome::success();
      },
      id.internal);
  if (!o.ok())
    return o;
  // Our init already runs where the caller wants it (its thread or ours).
  FallbackConfig config(c->settings.raw);
  config.config.blocking = 1;
  ncclComm_t made = nullptr;
  ncclResult_t r =
      real->CommInitRankConfig(&made, c->nranks, id, c->rank, &config.config);
  if (r != ncclSuccess) {
    c->noFallback = fmt::format("the real NCCL ({}) failed to make its "
                                "communicator: {} ({})",
                                real->path, real->GetErrorString(r),
                                real->GetLastError(nullptr));
    logWarn(c->noFallback);
    return Outcome::success();
  }
  c->real = made;
  c->realLib = real;
  return Outcome::success();
}

} // namespace

Outcome nativeAsyncError(ncclComm *c) {
  if (!c->native)
    return Outcome::success();
  auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard<std::mutex> lock(c->mutex);
    if (now - c->lastPeek < std::chrono::milliseconds(1))
      return Outcome::success(); // a recorded error stays in asyncError
    c->lastPeek = now;
  }
  mscclcResult_t recorded = mscclcSuccess;
  rt::RelaxedCapture relaxed; // watchdogs poll while other threads capture
  mscclcResult_t r = mscclcCommGetAsyncError(c->native, &recorded);
  if (r != mscclcSuccess)
    return fromMscclc(r, "mscclcCommGetAsyncError");
  return fromMscclc(recorded, "a kernel of this communicator");
}

Outcome sharedGpuAllowed(bool *allowed) {
  return fromStatus(rt::get(rt::setting::AllowSharedGpu, allowed),
                    "reading the environment");
}

Outcome readConfig(const ncclConfig_t *config, CommSettings *out) {
  *out = CommSettings();
  if (!config)
    return Outcome::success();
  if (config->magic != NCCL_CONFIG_MAGIC)
    return invalidArgument(fmt::format(
        "ncclConfig_t has magic {:#x}, not {:#x}: initialise it with "
        "NCCL_CONFIG_INITIALIZER",
        config->magic, unsigned(NCCL_CONFIG_MAGIC)));
  size_t header = offsetof(ncclConfig_t, blocking);
  if (config->size < header)
    return invalidArgument(fmt::format(
        "ncclConfig_t has size {}, smaller than its header", config->size));
  // A caller built against an older nccl.h passes a smaller struct: read
  // only what it has, the rest stays "undefined".
  size_t n = std::min(config->size, sizeof(ncclConfig_t));
  memcpy(static_cast<void *>(&out->raw), config, n);
  out->raw.size = sizeof(ncclConfig_t);
  const ncclConfig_t &r = out->raw;
  if (r.blocking != NCCL_CONFIG_UNDEF_INT) {
    if (r.blocking != 0 && r.blocking != 1)
      return invalidArgument(fmt::format(
          "ncclConfig_t.blocking is {}: 0 or 1 expected", r.blocking));
    out->blocking = r.blocking == 1;
  }
  auto ctas = [](int v) { return v == NCCL_CONFIG_UNDEF_INT || v >= 1; };
  if (!ctas(r.minCTAs) || !ctas(r.maxCTAs))
    return invalidArgument(fmt::format(
        "ncclConfig_t.minCTAs ({}) and maxCTAs ({}) must be at least 1",
        r.minCTAs, r.maxCTAs));
  if (r.minCTAs != NCCL_CONFIG_UNDEF_INT && r.maxCTAs != NCCL_CONFIG_UNDEF_INT &&
      r.minCTAs > r.maxCTAs)
    return invalidArgument(fmt::format(
        "ncclConfig_t.minCTAs ({}) exceeds maxCTAs ({})", r.minCTAs, r.maxCTAs));
  out->minCTAs = r.minCTAs;
  out->maxCTAs = r.maxCTAs;
  return Outcome::success();
}

ncclComm *newComm(int rank, int nranks, int device, const CommSettings &s) {
  auto c = std::make_unique<ncclComm>();
  c->rank = rank;
  c->nranks = nranks;
  c->device = device;
  c->settings = s;
  std::lock_guard<std::mutex> lock(liveMutex);
  liveComms().insert(c.get());
  return c.release();
}

void deleteComm(ncclComm *c) {
  {
    std::lock_guard<std::mutex> lock(liveMutex);
    liveComms().erase(c);
  }
  delete c;
}

Outcome lookupCommNoWait(ncclComm_t handle, const char *fn, ncclComm **out) {
  *out = nullptr;
  if (!handle)
    return invalidArgument(fmt::format("{}: the communicator is NULL", fn));
  std::lock_guard<std::mutex> lock(liveMutex);
  if (!liveComms().count(handle))
    return invalidArgument(fmt::format(
        "{}: communicator {} was destroyed or aborted, or was not made by "
        "ncclCommInit*",
        fn, static_cast<const void *>(handle)));
  *out = handle;
  return Outcome::success();
}

Outcome waitInit(ncclComm *c) {
  std::unique_lock<std::mutex> lock(c->mutex);
  c->initChanged.wait(lock, [c] { return c->initDone; });
  return c->initOutcome;
}

Outcome lookupComm(ncclComm_t handle, const char *fn, ncclComm **out) {
  Outcome o = lookupCommNoWait(handle, fn, out);
  if (!o.ok())
    return o;
  o = waitInit(*out);
  if (!o.ok()) {
    *out = nullptr;
    return {o.result, fmt::format("{}: the communicator's initialisation "
                                  "failed: {}",
                                  fn, o.message)};
  }
  return o;
}

Outcome initComm(ncclComm *c, const rt::UniqueId &id) {
  FallbackPolicy policy;
  Outcome o = fallbackPolicy(&policy);
  if (!o.ok())
    return o;
  o = fromCuda(cudaSetDevice(c->device),
               fmt::format("cudaSetDevice({})", c->device));
  if (!o.ok())
    return o;
  RankInfo mine;
  mine.device = c->device;
  cudaDeviceProp prop;
  o = fromCuda(cudaGetDeviceProperties(&prop, c->device),
               "cudaGetDeviceProperties");
  if (!o.ok())
    return o;
  memcpy(mine.uuid, prop.uuid.bytes, sizeof(mine.uuid));
  std::string noReal;
  const RealNccl *real = nullptr;
  if (policy.mode != FallbackPolicy::Mode::None) {
    real = realNccl(&noReal);
    mine.hasReal = real != nullptr;
  } else {
    noReal = "MSCCLC_NCCL_FALLBACK=none";
  }

  o = fromStatus(rt::Bootstrap::create(id, c->rank, c->nranks, &c->bootstrap),
                 "bootstrap");
  if (!o.ok())
    return o;
  std::vector<RankInfo> all(size_t(c->nranks));
  all[size_t(c->rank)] = mine;
  o = fromStatus(c->bootstrap->allGather(all.data(), sizeof(RankInfo)),
                 "exchanging the ranks' GPUs");
  if (!o.ok())
    return o;
  for (int i = 0; i < c->nranks && !c->sharedGpu; ++i)
    for (int j = i + 1; j < c->nranks; ++j)
      if (!memcmp(all[size_t(i)].uuid, all[size_t(j)].uuid, sizeof(mine.uuid))) {
        bool allowed = false;
        if (Outcome o = sharedGpuAllowed(&allowed); !o.ok())
          return o;
        if (!allowed)
          return invalidUsage(fmt::format(
              "Duplicate GPU detected: ranks {} and {} both use the GPU of "
              "CUDA device {}; several ranks on one GPU are allowed only for "
              "tests, with MSCCLC_ALLOW_SHARED_GPU=1",
              i, j, all[size_t(j)].device));
        c->sharedGpu = true;
        c->noFallback = fmt::format(
            "ranks {} and {} share a GPU (MSCCLC_ALLOW_SHARED_GPU=1), and the "
            "real NCCL refuses several ranks on one GPU",
            i, j);
        break;
      }

  if (policy.mode == FallbackPolicy::Mode::All) {
    c->noNative = "MSCCLC_NCCL_FALLBACK=all";
  } else {
    o = initNative(c);
    if (!o.ok())
      return o;
  }

  if (c->sharedGpu)
    return Outcome::success();
  for (int r = 0; r < c->nranks; ++r)
    if (!all[size_t(r)].hasReal) {
      c->noFallback = r == c->rank ? noReal
                                   : fmt::format("rank {} has no real NCCL", r);
      return Outcome::success();
    }
  return initFallback(c, real);
}

ncclResult_t failOnFallback(const ncclComm *c, const char *fn, ncclResult_t r) {
  return fail(r, fmt::format("{} on the fallback NCCL: {}", fn,
                             c->realLib->GetLastError(nullptr)));
}

void finishInit(ncclComm *c, const Outcome &o) {
  if (!o.ok())
    report(o);
  std::lock_guard<std::mutex> lock(c->mutex);
  c->initOutcome = o;
  c->initDone = true;
  c->initChanged.notify_all();
}

void startInit(ncclComm *c, const rt::UniqueId &id, bool onThread) {
  auto run = [c, id] { finishInit(c, initComm(c, id)); };
  if (onThread)
    c->initThread = std::thread(run);
  else
    run();
}

Outcome destroyComm(ncclComm *c, bool abort) {
  // Kernels exist only once initialisation finished, so aborting after it
  // loses nothing; an initialisation that waits for absent ranks ends at
  // the bootstrap's deadline.
  if (c->initThread.joinable())
    c->initThread.join();
  Outcome result;
  // mscclc's kernels first: they may wait for peers that are gone.
  if (abort && c->native)
    (void)mscclcCommAbort(c->native);
  if (c->real) {
    ncclResult_t r = abort ? c->realLib->CommAbort(c->real)
                           : c->realLib->CommDestroy(c->real);
    if (r != ncclSuccess)
      result = {r, fmt::format("the fallback NCCL's {}: {}",
                               abort ? "ncclCommAbort" : "ncclCommDestroy",
                               c->realLib->GetLastError(nullptr))};
    c->real = nullptr;
  }
  if (c->native) {
    Outcome d = fromMscclc(mscclcCommDestroy(c->native), "mscclcCommDestroy");
    if (result.ok())
      result = d;
    c->native = nullptr;
  }
  deleteComm(c);
  return result;
}

} // namespace mscclc::nccl
