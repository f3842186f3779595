//===- ProgramModel.h - Flat, indexed view of an mscl.program -------------===//
//
// The verification passes look at a program as a set of thread blocks, each a
// straight list of steps, and at memory as a dense array of chunk slots. This
// header builds that view once: channels get indices and know their other
// end and the block that uses them, every operation is decoded into the moves
// of data it makes (destination <- sources) and the synchronisation it does,
// in the order the execution model fixes within one operation:
// waits, LL packet reads, data moves, signals, flushes.
//
//===----------------------------------------------------------------------===//
#ifndef MSCL_LIB_VERIFICATION_PROGRAMMODEL_H
#define MSCL_LIB_VERIFICATION_PROGRAMMODEL_H

#include "mscl/IR/MsclLayout.h"
#include "mscl/IR/MsclOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <memory>
#include <string>
#include <vector>

namespace mscl::verify {

/// A run of `count` chunks of buffer `buffer` (an index into
/// ProgramModel::buffers) on `rank`.
struct Range {
  int64_t rank = 0;
  int buffer = 0;
  int64_t index = 0;
  int64_t count = 1;
};

/// Sources of a move, shared by the moves of one action (a reduce_put to
/// 255 peers holds its 256 sources once, in every launch of the model).
using Sources = std::shared_ptr<const llvm::SmallVector<Range, 2>>;

/// `dst[j] <- combine(srcs[*][j])` for j < dst.count. One source is a copy,
/// several a reduction. `channel` is the channel that carries the data to a
/// peer for put-like moves (-1 for local and switch moves).
struct Move {
  Range dst;
  Sources srcs;
  llvm::ArrayRef<Range> sources() const {
    return srcs ? llvm::ArrayRef<Range>(*srcs) : llvm::ArrayRef<Range>();
  }
  int channel = -1;
  /// A port-channel put: the proxy reads the source after the operation
  /// returned, until a flush on the channel.
  bool asyncSource = false;
  /// `srcs` are those of the previous move of the step (a reduce_put to
  /// several peers, a switch broadcast): its reads and its value serve.
  bool sharesSources = false;
  /// A switch reduction: `srcs` are the group's ranks' chunks, combined in
  /// the switch's own order.
  bool switchReduce = false;
};

/// One operation of a thread block, decoded.
struct Step {
  mlir::Operation *op = nullptr;
  /// Which launch of the program the step belongs to (0 unless the model
  /// holds several back-to-back launches).
  int launch = 0;
  /// The enclosing pipeline, if any (its body is modelled as one iteration).
  mlir::Operation *pipeline = nullptr;
  llvm::SmallVector<int, 1> waits;   // channels (of this block) waited on
  llvm::SmallVector<Move, 1> moves;  // data moved
  llvm::SmallVector<int, 1> signals; // channels signalled
  llvm::SmallVector<int, 1> flushes; // channels flushed
  /// Whether some source lies in a packet buffer (the step spins on flags).
  bool readsPackets = false;
  /// Whether `waits` names a channel twice (each needs its own signal).
  bool waitsRepeat = false;
  /// Every point-to-point channel the step goes through (reads through a
  /// channel included): the block owns them.
  llvm::SmallVector<int, 1> channels;
};

struct Block {
  int64_t rank = 0;
  int64_t id = 0;
  int64_t group = 1;
  mlir::Operation *op = nullptr;
  std::vector<Step> steps;
  /// Index of the first step of each launch (one entry per launch).
  std::vector<int> launchStarts;
  /// Whether `step` is the first of a launch after the first one: every
  /// block of the rank finished the previous launch before it runs.
  bool startsLaunch(int step) const {
    for (size_t l = 1; l < launchStarts.size(); ++l)
      if (launchStarts[l] == step)
        return true;
    return false;
  }
  /// Whether `step` is the last step of some launch.
  bool endsLaunch(int step) const {
    for (size_t l = 1; l <= launchStarts.size(); ++l) {
      int next = l < launchStarts.size() ? launchStarts[l]
                                         : static_cast<int>(steps.size());
      if (next == step + 1)
        return true;
    }
    return false;
  }
};

struct BufferInfo {
  std::string name;
  int64_t chunks = 0;
  bool packet = false;
  /// A user buffer (input/output): chunk j covers [floor(j*count/K),
  /// floor((j+1)*count/K)); a scratch chunk holds ceil(count/K) elements.
  bool user = false;
  /// Which user buffer it is (an in-place program's one is both).
  bool input = false, output = false;
  int64_t offset = 0; // first slot of this buffer within a rank
  /// For a packet buffer in a model of several launches: the buffer that
  /// holds its other parity half (odd launches use it, kernel-abi.md).
  int parityTwin = -1;
};

struct ChannelInfo {
  ChannelOp op;
  std::string name;
  int64_t src = 0, dst = 0;
  bool port = false, ll = false;
  int otherEnd = -1; // channel from dst to src of the same kind/protocol/id
  int owner = -1;    // block that uses the channel, -1 when unused
  /// (step index in the owner block) of every signal and wait on this
  /// channel, in program order.
  std::vector<int> signalSteps, waitSteps;
};

/// A step of a block: (block, step) pair.
struct StepRef {
  int block = -1;
  int step = -1;
  bool valid() const { return block >= 0; }
};

class ProgramModel {
public:
  /// `pipelineCopies`: how many iterations of every pipeline body the
  /// blocks' steps hold (one stands for all of them, see
  /// docs/verification.md; the group-drift check needs two).
  /// `launches`: how many back-to-back launches of the program the blocks'
  /// steps hold, one after the other (AcrossLaunches.cpp), with what the
  /// runtime does between launches (mscl/IR/MsclLaunches.h): semaphores
  /// carry over; plain scratch and user buffers are the same slots in every
  /// launch; a packet buffer has two parity halves (launchCopy).
  explicit ProgramModel(ProgramOp program, int pipelineCopies = 1,
                        int launches = 1);

  ProgramOp program;
  int64_t ranks = 0;
  /// K: the chunks per rank that the run-time count is cut into.
  int64_t chunks = 1;
  /// Chunk sizes at every count.
  ChunkLayout layout{1};
  std::vector<BufferInfo> buffers;
  llvm::StringMap<int> bufferIndex;
  std::vector<ChannelInfo> channels;
  llvm::StringMap<int> channelIndex;
  /// channelIndex by the (uniqued) symbol reference: no string hashing per
  /// operand.
  mutable llvm::DenseMap<mlir::Attribute, int> channelOfRef;
  std::vector<Block> blocks;
  /// Ranks of every switch channel, by name.
  llvm::StringMap<llvm::SmallVector<int64_t, 8>> switchGroups;
  int64_t slotsPerRank = 0;
  int launches = 1;

  int64_t numSlots() const { return slotsPerRank * ranks; }
  int64_t slot(int64_t rank, int buffer, int64_t index) const {
    return rank * slotsPerRank + buffers[buffer].offset + index;
  }
  /// The buffer (an index into `buffers`) and chunk index of `slot`.
  std::pair<int, int64_t> chunkOfSlot(int64_t slot) const;
  int64_t slot(const Range &range, int64_t j) const {
    return slot(range.rank, range.buffer, range.index + j);
  }
  bool isPacket(const Range &range) const {
    return buffers[range.buffer].packet;
  }
  /// Calls `fn(move, src, j)` for chunk j of every packet-buffer source a
  /// step reads (the chunks its LL read spins on).
  void forEachPacketRead(
      const Step &step,
      llvm::function_ref<void(const Move &move, const Range &src, int64_t j)>
          fn) const {
    if (!step.readsPackets)
      return;
    for (const Move &move : step.moves)
      for (const Range &src : move.sources())
        if (isPacket(src))
          for (int64_t j = 0; j < src.count; ++j)
            fn(move, src, j);
  }

  /// The residues at which chunk step `j` of `move` moves the last
  /// elements of its chunks (mscl/IR/MsclLayout.h).
  Residues movesLast(const Move &move, int64_t j) const;

  const Step &step(StepRef ref) const {
    return blocks[ref.block].steps[ref.step];
  }

  /// "rank R thread block T" (with the group when it has more than one).
  std::string blockName(int block) const;
  /// "<rank R, NAME[I]>" for one slot.
  std::string slotName(int64_t slot) const;
  /// "@name" of a channel.
  std::string channelName(int channel) const {
    return "@" + channels[channel].name;
  }

private:
  Range toRange(ChunkAttr chunk) const;
  int channelOf(mlir::Attribute ref) const;
  /// The step of `op`, from its primitive actions (CommOpInterface).
  void decode(mlir::Operation *op, mlir::Operation *pipeline,
              std::vector<Step> &steps);
  /// The moves of one copy or reduce action: one per written chunk.
  void addData(Step &step, const Action &action);
  /// The ranges `operand` names: one, or one per rank of a switch group.
  void appendRanges(const ActionOperand &operand,
                    llvm::SmallVectorImpl<Range> &out) const;
  /// Appends launches 1.. to every block: copies of launch 0's steps,
  /// with packet operands moved to their parity half in odd launches.
  void repeatLaunches();
};

/// The one-launch model of a program as an MLIR analysis: mscl-check-sync
/// builds it, mscl-check-collective finds it cached (the checks change
/// nothing and preserve every analysis).
struct ProgramModelAnalysis {
  explicit ProgramModelAnalysis(mlir::Operation *op)
      : model(mlir::cast<ProgramOp>(op)) {}
  ProgramModel model;
};

} // namespace mscl::verify

#endif // MSCL_LIB_VERIFICATION_PROGRAMMODEL_H
