//===- Comm.h - The communicator behind an ncclComm_t ---------------------===//
//
// An ncclComm_t holds an mscclc communicator (native collectives), a
// communicator of the real NCCL when the fallback is available, and our own
// TCP bootstrap among the ranks, which carries the real NCCL's unique id,
// the mscclc communicator's id and ncclCommSplit's colours.
//
// Initialisation runs on the caller's thread, or on a thread of its own for
// a non-blocking communicator (config.blocking = 0) and inside a group
// (several ranks initialised from one thread). Every use waits for it.
//
// Handles are checked against the set of live communicators, so a NULL or
// destroyed one is an error, not a crash.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_NCCL_COMM_H
#define MSCCLC_NCCL_COMM_H

#include "Errors.h"
#include "RealNccl.h"
#include "Registrations.h"
#include "Route.h"
#include "Validate.h"

#include "mscclc/runtime/Bootstrap.h"

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace mscclc::nccl {

/// What ncclConfig_t asks for, read through its size/magic/version header.
struct CommSettings {
  bool blocking = true;
  int minCTAs = NCCL_CONFIG_UNDEF_INT;
  int maxCTAs = NCCL_CONFIG_UNDEF_INT;
  ncclConfig_t raw = NCCL_CONFIG_INITIALIZER; ///< for the real NCCL
};

/// The configuration handed to the real NCCL: ours (size = the 2.28
/// layout) followed by "undefined" ints, because some NCCL releases read
/// their own, larger sizeof(ncclConfig_t) whatever `size` says; every field
/// added after 2.28 is an int, so they all read "undefined".
struct FallbackConfig {
  ncclConfig_t config;
  int later[32];
  explicit FallbackConfig(const ncclConfig_t &c) : config(c) {
    config.size = sizeof(ncclConfig_t);
    for (int &v : later)
      v = NCCL_CONFIG_UNDEF_INT;
  }
};
static_assert(offsetof(FallbackConfig, later) == sizeof(ncclConfig_t),
              "the padding must follow the 2.28 fields directly");

/// Reads `config` (null: defaults); ncclInvalidArgument for a config not
/// made by NCCL_CONFIG_INITIALIZER or with contradictory values.
Outcome readConfig(const ncclConfig_t *config, CommSettings *out);

} // namespace mscclc::nccl

struct ncclWindow_vidmem {
  ncclComm *comm = nullptr;
  void *buff = nullptr;
  size_t size = 0;
  ncclWindow_t real = nullptr;
};

struct ncclComm {
  // Set before initialisation starts.
  int rank = 0;
  int nranks = 0;
  int device = 0;
  /// The node of the native communicator's rank: a split's, its parent's
  /// (virtual nodes stay); -1 takes them from the environment or hosts.
  int node = -1;
  mscclc::nccl::CommSettings settings;

  // Set by initialisation.
  std::unique_ptr<mscclc::rt::Bootstrap> bootstrap;
  mscclcComm_t native = nullptr;
  /// Why the communicator has no native part (ncclCommShrink with
  /// excluded ranks), or "" when it has one.
  std::string noNative;
  const mscclc::nccl::RealNccl *realLib = nullptr;
  ncclComm_t real = nullptr;
  std::string noFallback; ///< why `real` is null
  bool sharedGpu = false;

  // Initialisation state.
  std::mutex mutex;
  std::condition_variable initChanged;
  bool initDone = false;
  mscclc::nccl::Outcome initOutcome;
  std::thread initThread;

  // Guarded by `mutex`.
  mscclc::nccl::Outcome asyncError; ///< the first asynchronous failure
  std::map<int, mscclc::nccl::PreMulSumOp> ops;
  int nextOp = ncclNumOps;
  std::set<std::pair<int, int>> logged; ///< (collective, size bucket)
  /// When nativeAsyncError last read the kernels' error records.
  std::chrono::steady_clock::time_point lastPeek;
  std::map<void *, std::unique_ptr<std::pair<void *, size_t>>> registrations;
  std::map<ncclWindow_t, std::unique_ptr<ncclWindow_vidmem>> windows;
  /// The windows' ranges, for calls that run on them in place.
  mscclc::nccl::Registrations windowRanges;
};

namespace mscclc::nccl {

/// A new communicator handle, registered as live.
ncclComm *newComm(int rank, int nranks, int device, const CommSettings &s);
/// Unregisters and frees `c` (after its parts were destroyed).
void deleteComm(ncclComm *c);

/// The live communicator `handle`, initialised (waits for it). `fn` names
/// the caller in messages. A NULL, destroyed or failed one is an error.
Outcome lookupComm(ncclComm_t handle, const char *fn, ncclComm **out);
/// Fails `fn` with the fallback NCCL's result `r` and its own message.
ncclResult_t failOnFallback(const ncclComm *c, const char *fn, ncclResult_t r);
/// Like lookupComm without waiting for initialisation.
Outcome lookupCommNoWait(ncclComm_t handle, const char *fn, ncclComm **out);
/// Waits for the initialisation of `c`.
Outcome waitInit(ncclComm *c);

/// Initialises `c` as rank c->rank of the bootstrap `id`: our bootstrap,
/// the shared-GPU check, the mscclc communicator and the fallback's.
Outcome initComm(ncclComm *c, const rt::UniqueId &id);
/// Runs initComm now (blocking) or on a thread of its own.
void startInit(ncclComm *c, const rt::UniqueId &id, bool onThread);
/// Records how an initialisation ended (reporting a failure) and wakes the
/// threads waiting for it.
void finishInit(ncclComm *c, const Outcome &o);

/// Destroys the parts of `c` (aborting them first when `abort`), then `c`.
Outcome destroyComm(ncclComm *c, bool abort);

/// An error this rank's mscclc kernels recorded (a wait that timed out),
/// read without waiting for their streams; success when none. Reads at
/// most once a millisecond: polling loops (nccl-tests' stream wait, a
/// watchdog) would otherwise add a copy per poll.
Outcome nativeAsyncError(ncclComm *c);

/// Whether MSCCLC_ALLOW_SHARED_GPU lets several ranks share a GPU; an
/// error names a value that is not a boolean.
Outcome sharedGpuAllowed(bool *allowed);

} // namespace mscclc::nccl

#endif // MSCCLC_NCCL_COMM_H
