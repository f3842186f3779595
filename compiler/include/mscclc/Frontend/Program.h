//===- Program.h - The evaluated, per-rank form of an .mscl algorithm ----===//
//
// Meta-evaluation turns the AST of an algorithm (with its loops over ranks,
// lets, functions and parameters) into this flat form: buffer and channel
// declarations plus, for every rank and thread block, the ordered list of
// operations it runs. MLIRGen translates it one to one into the `mscl`
// dialect. Nothing here depends on run-time sizes.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_FRONTEND_PROGRAM_H
#define MSCCLC_FRONTEND_PROGRAM_H

#include "mlir/IR/Location.h"
#include "mscclc/floor/Tables.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mscclc {

enum class ChannelKind { Memory, Port, Switch };
enum class Protocol { None, LL, HB };

/// A contiguous run of chunks of one buffer on one rank. `buffer` is
/// "input", "output" or a scratch buffer's name. In-place aliases have
/// already been rewritten to the canonical buffer.
struct ChunkRef {
  std::string buffer;
  int64_t rank = 0;
  int64_t index = 0;
  int64_t count = 1;
  mlir::Location loc;
};

struct ScratchBuffer {
  std::string name;
  int64_t chunks = 0;
  bool packet = false; // written by LL puts: holds LL packets, not plain data
  mlir::Location loc;
};

/// A channel, identified by (kind, src, dst, protocol, id) for point-to-point
/// channels and by (ranks, id) for switch channels. `name` is unique in the
/// program and is what operations refer to.
struct Channel {
  std::string name;
  ChannelKind kind = ChannelKind::Memory;
  Protocol protocol = Protocol::None; // LL or HB for memory, None otherwise
  int64_t src = 0, dst = 0;           // point-to-point channels
  std::vector<int64_t> ranks;         // switch channels
  int64_t id = 0;
  mlir::Location loc;
};

enum class OpKind {
  Put,
  PutSignal,
  PutSignalFlush,
  Get,
  Signal,
  Wait,
  Flush,
  ReadReduce,
  ReducePut,
  Copy,
  Reduce,
  SwitchReduce,
  SwitchBroadcast,
  Barrier,
  Pipeline
};

/// One operation placed on a rank and thread block. Fields used per kind:
///   put/put_signal/put_signal_flush: channel, dst (remote), srcs[0] (local)
///   get:            channel, dst (local), srcs[0] (remote)
///   signal/wait/flush: channel
///   read_reduce:    channel, dst (local), srcs[0] (remote)
///   reduce_put:     channel, dst (remote), srcs (local, >= 1)
///   copy:           dst, srcs[0]; reduce: dst, srcs (>= 2)
///   switch_reduce:  channel, dst (local), srcs[0] (same chunk on the group)
///   switch_broadcast: channel, dst (chunk on every group rank), srcs[0]
///   barrier:        nothing
///   pipeline:       unitBytes, body
struct Operation {
  OpKind kind;
  std::string channel;
  std::optional<ChunkRef> dst;
  std::vector<ChunkRef> srcs;
  int64_t unitBytes = 0;
  std::vector<Operation> body;
  mlir::Location loc;
};

/// The operations of one thread block (or thread-block group) of one rank.
struct ThreadBlock {
  int64_t id = 0;        // first block
  int64_t groupSize = 1; // >1 for `tbs A..B`
  std::vector<Operation> ops;
};

struct RankProgram {
  int64_t rank = 0;
  std::vector<ThreadBlock> threadBlocks; // sorted by id
};

/// The whole evaluated algorithm.
struct Program {
  std::string name;
  Collective collective = Collective::AllReduce; // mscclc/floor/Tables.h
  bool inPlace = false;
  int64_t root = 0;
  int64_t ranks = 0;
  int64_t gpusPerNode = 0;
  int64_t instances = 1;
  int64_t chunks = 1;       // K: chunks per `count`
  int64_t inputChunks = 0;  // derived from the collective (see language.md)
  int64_t outputChunks = 0;
  std::vector<ScratchBuffer> scratch;
  std::vector<Channel> channels;
  std::vector<RankProgram> rankPrograms; // one per rank, sorted
  mlir::Location loc;
};

} // namespace mscclc

#endif // MSCCLC_FRONTEND_PROGRAM_H
