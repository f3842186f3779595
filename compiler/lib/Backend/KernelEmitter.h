//===- KernelEmitter.h - One rank's kernel as CUDA or HIP C++ --*- C++ -*-===//
//
// A rank's kernel is a `switch (blockIdx.x)` over its thread blocks; each
// case is the block's operations as straight-line calls into the device
// library (runtime/include/mscclc/device), with every chunk offset an
// expression of the run-time element count. Nothing is interpreted at run
// time. The body is the same for CUDA and HIP (the device library hides
// the vendor); only the kernel's signature differs.
//
// The emitter is split by concern:
//  - KernelEmitter.cpp: the kernel, its prologue (arguments and the
//    declarations the body uses) and its thread blocks;
//  - OpEmitter.cpp: one operation at a time;
//  - Operands.cpp: the pointer and size expressions of chunk operands, and
//    the element ranges an operation covers.
// Program-level facts come from ProgramInfo, the text goes through
// CodeWriter, and what the body refers to is recorded in KernelUses while
// it is written, so the prologue declares exactly that.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_LIB_BACKEND_KERNELEMITTER_H
#define MSCCLC_LIB_BACKEND_KERNELEMITTER_H

#include "CodeWriter.h"
#include "ProgramInfo.h"
#include "mscclc/Backend/Backend.h"

#include "mlir/IR/AsmState.h"

#include <optional>
#include <set>

namespace mscclc {
namespace backend {

/// One chunk operand, ready to be turned into pointer expressions.
struct Operand {
  const BufferInfo *buffer = nullptr;
  mscl::ChunkAttr chunk;
  /// How the operand is reached: locally, through memory channel `index`
  /// (peer buffers) or through switch channel `index` (multimem address).
  enum class Via { Local, Memory, Switch } via = Via::Local;
  int index = 0;

  bool isPacket() const { return buffer->packet; }
  bool isUser() const { return buffer->kind != mscl::BufferKind::scratch; }
};

/// The kernel-wide names a kernel body refers to. The expression builders
/// record each name as they write it; the prologue declares those, so the
/// source compiles warning-free.
struct KernelUses {
  bool input = false;           ///< `in`: the input buffer
  bool output = false;          ///< `out`: the output buffer
  bool chunkElems = false;      ///< `ce`: elements per scratch chunk
  bool chunkStride = false;     ///< `cs`: scratch chunk stride (elements)
  bool packetsPerChunk = false; ///< `ppc`: LL packet stride of a chunk
  bool parity = false;          ///< `par`: which half of packet buffers
  bool userBounds = false;      ///< `ub(j)`: first element of user chunk j
  std::set<int> scratchOffsets; ///< `off_<name>`, by scratch index
  std::set<int> scratchPlain;   ///< `s_<name>`
  std::set<int> scratchPackets; ///< `pk_<name>`
};

/// The register that holds a channel's expected semaphore value.
std::string waitVar(const ChannelInfo &c);

class KernelEmitter {
public:
  KernelEmitter(const ProgramInfo &info, mlir::AsmState &asmState,
                int64_t rank, Target target);

  /// Emits the kernel of the rank to `os`; false after an error, which is
  /// reported at the operation's location.
  bool emit(llvm::raw_ostream &os);

  /// Elementwise operations in the emitted kernel.
  int64_t dataOps() const { return dataOpCount; }
  /// Operations of the emitted kernel that run a loop of the device
  /// library: the data operations, and the waits, port pushes and flushes.
  int64_t loopOps() const { return dataOpCount + syncOpCount; }

private:
  // KernelEmitter.cpp
  void emitPrologue(llvm::raw_ostream &os) const;
  bool emitBlock(mscl::ThreadBlockOp tb);
  /// The `// file:line: op` comment above an operation's code.
  void comment(mlir::Operation *op);
  /// The Site{line, channel kind, channel, opcode} an error record names.
  std::string site(mlir::Operation *op, const char *kind, int channel,
                   const char *opcode) const;

  // OpEmitter.cpp
  bool emitOp(mlir::Operation *op);
  bool emitPipeline(mscl::PipelineOp pipeline);
  bool emitElementwise(mlir::Operation *op, llvm::ArrayRef<Operand> srcs,
                       llvm::ArrayRef<Operand> dsts);
  bool emitMemoryPut(mlir::Operation *op, const ChannelInfo &channel,
                     mscl::ChunkAttr dst, mscl::ChunkAttr src, bool signal);
  bool emitPortPut(mlir::Operation *op, const ChannelInfo &channel,
                   mscl::ChunkAttr dst, mscl::ChunkAttr src, bool signal,
                   bool flush);
  bool emitSwitch(mlir::Operation *op, bool reduce, const SwitchInfo &sw,
                  mscl::ChunkAttr dst, mscl::ChunkAttr src);
  bool emitSignal(mlir::Operation *op, mlir::ArrayAttr channels);
  bool emitWait(mlir::Operation *op, mlir::ArrayAttr channels);
  bool emitFlush(mlir::Operation *op, mlir::ArrayAttr channels);
  /// The rank's channel named by `ref`, or an error.
  const ChannelInfo *channel(mlir::Operation *op, mlir::Attribute ref);
  /// A chunk of the rank's own buffers, or an error.
  std::optional<Operand> local(mlir::Operation *op, mscl::ChunkAttr chunk);
  /// A chunk of the peer's buffers reached through a memory channel.
  std::optional<Operand> remote(mlir::Operation *op,
                                const ChannelInfo &channel,
                                mscl::ChunkAttr chunk);
  /// A peer chunk read through an HB memory channel (get, read_reduce).
  std::optional<Operand> hbRemote(mlir::Operation *op, mlir::Attribute ref,
                                  mscl::ChunkAttr chunk);

  // Operands.cpp
  /// The index of the operand's chunk in the current chunk step: its first
  /// chunk (+ `plus`), plus `k` when the operation goes chunk by chunk.
  std::string chunkIndex(const Operand &o, int64_t plus = 0) const;
  std::string sizeExpr(const Operand &o);
  std::string startExpr(const Operand &o);  ///< first element of the run
  std::string baseExpr(const Operand &o);   ///< T* of element 0
  std::string plainPtr(const Operand &o);   ///< T* at r.begin
  std::string packetPtr(const Operand &o);  ///< LLPacket* at r.begin
  std::string byteOffset(const Operand &o); ///< of r.begin in its buffer
  /// Opens the range scope of an operation over `operands` (a loop over
  /// its chunk steps where one run would move other elements, a loop over
  /// the block's stripes in a group); returns the number of loops opened,
  /// each a scope to close.
  int openRange(llvm::ArrayRef<Operand> operands);
  void closeRange(int opened);

  const ProgramInfo &info;
  mlir::AsmState &asmState;
  int64_t rank;
  Target target;
  const RankInfo &rankInfo;

  CodeWriter body{/*indent=*/2};
  KernelUses uses;
  int64_t dataOpCount = 0;
  int64_t syncOpCount = 0; ///< waits, port pushes and flushes

  // State of the block being emitted.
  int64_t groupSize = 1;
  bool inPipeline = false;
  /// Whether the operation being emitted goes chunk by chunk (`k`).
  bool perChunk = false;
};

} // namespace backend
} // namespace mscclc

#endif // MSCCLC_LIB_BACKEND_KERNELEMITTER_H
