//===- Model.h - An mscl.program prepared for simulation ------*- C++ -*-===//
//
// The program's declarations resolved to dense ids and every thread block's
// operations lowered to a flat list of steps, one per primitive action
// (CommOpInterface, mscl/IR/MsclSemantics.h): put_with_signal is a put step
// then a signal step, so the machine implements each action once.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_LIB_SIMULATOR_MODEL_H
#define MSCCLC_LIB_SIMULATOR_MODEL_H

#include "mscl/IR/MsclOps.h"
#include "mscclc/device/Layout.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <optional>
#include <string>
#include <vector>

namespace mscclc {
namespace sim {

struct BufferInfo {
  std::string name;
  mscl::BufferKind kind;
  int64_t chunks;
  bool packet;
  bool isUser() const { return kind != mscl::BufferKind::scratch; }
};

struct ChannelInfo {
  std::string name;
  mscl::ChannelKind kind;
  bool ll;
  int src, dst;
  /// The channel from dst to src of the same kind, protocol and id, whose
  /// waits this channel's signals release; -1 if the program has none.
  int peer = -1;
  bool crossNode;
  mlir::Operation *op;
  /// The thread block (group) that uses the channel; its size is how many
  /// increments one signal op sends (one per block of the group).
  int owner = -1;
  int64_t group = 1;
  bool isPort() const { return kind == mscl::ChannelKind::port; }
};

struct SwitchInfo {
  std::string name;
  llvm::SmallVector<int, 8> ranks;
};

/// A run of chunks of one buffer on one rank.
struct ChunkRef {
  int buffer;
  int rank;
  int64_t index, count;
};

enum class StepKind {
  Put,
  Get,
  Signal,
  Wait,
  Flush,
  Copy,
  Reduce,
  ReadReduce,
  ReducePut,
  SwitchReduce,
  SwitchBroadcast,
  Barrier,
  PipelineBegin,
  PipelineEnd,
};

/// One action of a thread block. Operand roles by kind:
/// Put: channels[0], dsts[0] (remote), srcs[0]. Get: channels[0], dsts[0],
/// remotes[0]. Signal/Wait/Flush: channels. Copy/Reduce: dsts[0], srcs.
/// ReadReduce: dsts[0], srcs, channels[i] + remotes[i]. ReducePut:
/// channels[i] + dsts[i] (remote), srcs, store. Switch ops: switchId,
/// dsts[0], srcs[0].
struct Step {
  StepKind kind;
  mlir::Operation *op;
  llvm::SmallVector<int, 2> channels;
  llvm::SmallVector<ChunkRef, 2> dsts;
  llvm::SmallVector<ChunkRef, 4> srcs;
  llvm::SmallVector<ChunkRef, 2> remotes;
  std::optional<ChunkRef> store;
  int switchId = -1;
  /// PipelineBegin: unit in bytes and the index of the matching
  /// PipelineEnd. PipelineEnd: `partner` is the begin.
  int64_t unit = 0;
  int partner = -1;

  bool isSync() const {
    return kind == StepKind::Signal || kind == StepKind::Wait ||
           kind == StepKind::Flush || kind == StepKind::Barrier;
  }
};

struct BlockInfo {
  int rank;
  int64_t id;
  int64_t group;
  mlir::Operation *op;
  std::vector<Step> steps;
};

struct Model {
  mutable mscl::ProgramOp program;
  mscl::CollectiveKind collective;
  int ranks;
  int gpusPerNode;
  int64_t chunks; ///< K
  bool inplace;
  int root;
  std::vector<BufferInfo> buffers;
  llvm::StringMap<int> bufferIds;
  /// The user buffers; in-place programs declare one and both ids name it.
  int input = -1, output = -1;
  std::vector<ChannelInfo> channels;
  llvm::StringMap<int> channelIds;
  std::vector<SwitchInfo> switches;
  llvm::StringMap<int> switchIds;
  std::vector<BlockInfo> blocks;
  /// Channels whose destination (resp. source) is each rank.
  std::vector<std::vector<int>> channelsInto, channelsFrom;

  /// Prepares `program`; emits an error and fails on IR the simulator
  /// cannot run (the verifier has already checked the rest).
  static mlir::FailureOr<Model> build(mscl::ProgramOp program);
};

/// Element ranges of chunks for one run-time element count.
struct Layout {
  int64_t count; ///< the collective's count (NCCL convention)
  int64_t k;     ///< chunks
  /// The kernels' layout (mscclc/device/Layout.h): scratch chunks of
  /// ceil(count / K) elements, user-buffer chunk j from floor(j*count/K).
  int64_t chunkSize() const {
    return int64_t(mscclc_scratch_chunk_elems(mscclc_u64(count), mscclc_u64(k)));
  }
  /// First element of chunk `j` of `buffer`.
  int64_t start(const BufferInfo &buffer, int64_t j) const {
    return buffer.isUser()
               ? int64_t(mscclc_chunk_begin(mscclc_u64(j), mscclc_u64(count),
                                            mscclc_u64(k)))
               : j * chunkSize();
  }
  int64_t size(const BufferInfo &buffer) const {
    return start(buffer, buffer.chunks);
  }
  /// The chunk holding element `e` of `buffer`.
  int64_t chunkOf(const BufferInfo &buffer, int64_t e) const;
};

} // namespace sim
} // namespace mscclc

#endif // MSCCLC_LIB_SIMULATOR_MODEL_H
