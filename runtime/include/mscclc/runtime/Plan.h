//===- Plan.h - The execution plan of a compiled program ------*- C++ -*-===//
//
// The typed form of `mscclc --emit=plan` (docs/plan.md). Parsing checks
// every field (docs/plan.md, "Validation"): what the runtime later indexes
// with (ranks, channel indices, peer indices, wait slots), every enum, and
// the fields' relations, so a bad plan is an error here and never an
// out-of-bounds access, a wrong size or a hang in the runtime or the
// kernel. Sizes computed from a plan saturate at UINT64_MAX (no memory
// holds that) instead of wrapping.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_PLAN_H
#define MSCCLC_RUNTIME_PLAN_H

#include "mscclc/floor/Shape.h"
#include "mscclc/runtime/Limits.h"
#include "mscclc/runtime/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mscclc::rt {

/// A user or scratch buffer named in a plan.
enum class BufferKind { Input = 0, Output = 1, Scratch = 2 };

struct PlanScratch {
  std::string name;
  int64_t chunks = 0;
  bool packet = false;
};

struct PlanChannel {
  int index = 0;
  std::string name;
  int peer = -1;
  bool ll = false; ///< memory channels: LL protocol (else HB)
  int64_t id = 0;
  int peerIndex = -1;
  int block = 0;
  int group = 1;
  int waitSlot = -1;
  bool signals = false;
  bool waits = false;
  bool peerInput = false, peerOutput = false, peerScratch = false;
};

struct PlanSwitchChannel {
  int index = 0;
  std::string name;
  int64_t id = 0;
  std::vector<int> ranks;
  /// Buffers reached through the switch: bound to its multicast object.
  bool input = false, output = false, scratch = false;
};

struct RankPlan {
  int rank = 0;
  std::string kernel;
  int blocks = 0;
  int waitSlots = 0;
  std::vector<PlanChannel> memoryChannels;
  std::vector<PlanChannel> portChannels;
  std::vector<PlanSwitchChannel> switchChannels;
};

struct Plan {
  int abiVersion = 0;
  std::string name;
  Collective collective = Collective::AllReduce;
  int ranks = 0;
  int gpusPerNode = 0;
  int instances = 1;
  int64_t chunks = 1;
  int64_t inputChunks = 1;
  int64_t outputChunks = 1;
  bool inPlace = false;
  int root = 0;
  int threadsPerBlock = 0;
  std::vector<std::string> dtypes;
  std::vector<std::string> redops;
  /// premulsum: scales a rank's input by its scalar into the staging.
  std::string premulKernel;
  bool usesPortChannels = false;
  bool usesSwitchChannels = false;
  std::vector<PlanScratch> scratch;
  std::vector<RankPlan> rankPlans;

  /// Elements of the input / output buffers for a collective `count`
  /// (UINT64_MAX where the product would not fit 64 bits; likewise below).
  uint64_t inputElems(uint64_t count) const;
  uint64_t outputElems(uint64_t count) const;
  /// Bytes of the scratch region for `count` elements of `elemSize` bytes.
  uint64_t scratchBytes(uint64_t count, uint64_t elemSize) const;
  /// Whether any channel of `rank` touches the peer's input/output buffers
  /// (then user buffers must be exchanged between ranks).
  bool needsPeerUserBuffers(int rank) const;
  /// Whether the stdlib runs it on staging (Executor.h): some channel
  /// reaches a peer's input or output, or it has port channels (whose
  /// proxy would otherwise need a context per pair of caller buffers).
  bool stagedByStdlib() const;
  /// reduce and gather: only the root's output holds the result (the
  /// kernels never touch the other ranks' outputs, nor may the runtime).
  bool resultAtRootOnly() const {
    return mscclc::resultAtRootOnly(collective);
  }
  /// broadcast and scatter: only the root's input holds data.
  bool inputAtRootOnly() const { return mscclc::inputAtRootOnly(collective); }
  /// Where `rank`'s result starts in its output buffer, in elements: in
  /// place, reduce-scatter and scatter leave it at rank * count (NCCL's
  /// layout); 0 otherwise.
  uint64_t resultOffset(int rank, uint64_t count) const {
    return inPlace ? inPlaceOutputOffset(collective, outputElems(count), rank)
                   : 0;
  }
  bool supportsDtype(const std::string &dtype) const;
  bool supportsRedop(const std::string &redop) const;
  /// Whether the program serves this data type and operator (a plan that
  /// lists none serves any), else an error naming the program and what it
  /// lacks: the check before a kernel is compiled or an executor made.
  Status serves(const std::string &dtype, const std::string &redop) const;
};

/// Parses and validates a plan: every field's type, enum and range, the
/// relations between fields (ranks and gpusPerNode, chunk counts and the
/// collective, channels and the uses* flags, reverse channels), each error
/// naming the field, the value and what is accepted.
Status parsePlan(const std::string &json, Plan *plan);

/// Whether every kernel the plan names (each rank's, premulKernel) is
/// defined in `source`, the program's CUDA or HIP source.
Status checkKernelsDefined(const Plan &plan, const std::string &source);

/// Element size of an MSCCLC_DTYPE name, 0 when unknown.
size_t dtypeSize(const std::string &dtype);

} // namespace mscclc::rt

#endif // MSCCLC_RUNTIME_PLAN_H
