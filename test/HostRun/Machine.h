//===- Machine.h - N ranks' memory, channels, proxies and launches -------===//
//
// What the runtime does on N GPUs (docs/plan.md "Runtime recipe",
// docs/kernel-abi.md), with host memory: every rank's user buffers,
// allocated once for the largest count, between guard bytes checked after
// every launch; scratch, allocated anew (zeroed) when a count needs more
// than the last (a smaller count reuses it, as Executor::ensureScratch
// does); one inbound semaphore per channel; the channel arrays with peer
// pointers into the other ranks' buffers; the persistent block epochs and
// wait counters; an error record; a FIFO and a proxy thread per rank when
// the plan has port channels.
//
// Each rank runs its launches in order as a stream does, without waiting
// for the others, every thread block on its own OS threads, at whatever
// count each launch has. All ranks finish a launch and prepare their
// buffers before any starts the next only at the first launch and at a new
// scratch generation (a count past the one the scratch is laid out for:
// collective steps in the runtime) and, with `lockstep`, everywhere.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_TEST_HOSTRUN_MACHINE_H
#define MSCCLC_TEST_HOSTRUN_MACHINE_H

#include "KernelUnit.h"
#include "Oracle.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace hostrun {

struct MachineOptions {
  unsigned threads = 1; ///< per thread block
  uint64_t timeoutNs = 10000000000ull;
  unsigned fifoCapacity = 1024; ///< the runtime's
  uint64_t offsetElems = 0;     ///< user buffers start this far past 256 B
  /// Synchronise every launch (programs proven for one launch only).
  bool lockstep = false;
  /// Every rank's launch and every block starts up to this many
  /// microseconds late (drawn from `seed`): other interleavings, ranks a
  /// launch apart.
  unsigned jitterUs = 0;
  uint64_t seed = 1;
};

/// A rank's logical buffers after one launch.
struct Snapshot {
  bool ran = false;
  std::vector<unsigned char> output; ///< the output (in place: one) buffer
  std::vector<unsigned char> input;  ///< out of place: the input buffer
};

class Machine {
public:
  /// `counts`: of every launch, in order. Throws std::runtime_error when a
  /// kernel of the plan is missing.
  Machine(const Plan &plan, const MscclcHostUnit &unit,
          const MachineOptions &options, const std::vector<uint64_t> &counts);
  ~Machine();

  /// Runs launch k of every rank on cases[k]; snaps[k][r] gets rank r's
  /// buffers after it. False when something failed: see failures().
  bool run(const std::vector<Case> &cases,
           std::vector<std::vector<Snapshot>> &snaps);

  /// What went wrong, the cause first (later ones may follow from it).
  std::vector<std::string> failures() const;

private:
  struct Rank;

  void stream(int r, const std::vector<Case> &cases,
              std::vector<std::vector<Snapshot>> &snaps);
  void launch(int r, unsigned k, uint64_t count);
  void proxy(int r);
  std::string serve(int r, uint64_t fst, uint64_t snd);
  bool drained() const;
  /// Waits until every rank's `counter` reaches k (and, with `served`,
  /// every proxy is idle), or something failed.
  void waitForAll(const std::vector<unsigned> &counter, unsigned k,
                  bool served) const;
  void fail(std::string what, bool cause);
  std::string errorText(int r, unsigned k, uint64_t count) const;
  std::string status() const;

  const Plan &plan_;
  MscclcHostUnit unit_;
  MachineOptions options_;
  std::vector<std::unique_ptr<Rank>> ranks_;
  std::vector<size_t> generationOf_; ///< scratch generation of each launch
  std::vector<uint64_t> layoutCount_; ///< per generation: its scratchCount
  uint32_t abort_ = 0;               ///< every rank's abortFlag
  std::atomic<bool> stopProxies_{false};
  std::atomic<uint64_t> progress_{0};
  mutable std::mutex mutex_; ///< failures_ and the launch counts below
  std::vector<std::pair<bool, std::string>> failures_;
  std::vector<unsigned> completed_; ///< launches each rank has finished
  std::vector<unsigned> prepared_;  ///< launches each rank has buffers for
};

} // namespace hostrun

#endif // MSCCLC_TEST_HOSTRUN_MACHINE_H
