//===- MsclSemantics.h - The primitive actions of mscl operations -*- C++ -*-===//
//
// Every thread-block operation is a short sequence of primitive actions
// (CommOpInterface::getActions): data movement (copy or reduce) between
// chunks reached locally, through a channel's peer or through a switch
// group, and the synchronisation primitives signal, wait, flush and the
// block barrier. This is the one statement of what an operation reads,
// writes, signals, waits for and orders; execution-model.md says what each
// primitive means on each kind of channel.
//
//===----------------------------------------------------------------------===//
#ifndef MSCL_IR_MSCLSEMANTICS_H
#define MSCL_IR_MSCLSEMANTICS_H

#include "mscl/IR/MsclDialect.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/SmallVector.h"

namespace mscl {

/// How an operand's chunk is reached from the executing rank.
enum class Reach {
  Local, ///< the rank's own memory
  Peer,  ///< the other end of point-to-point channel `via`
  Group, ///< every rank of switch channel `via` (multimem)
};

/// One chunk an action reads or writes.
struct ActionOperand {
  ChunkAttr chunk;
  Reach reach = Reach::Local;
  mlir::FlatSymbolRefAttr via; ///< the channel, unless local
};

struct Action {
  enum class Kind {
    Copy,    ///< writes[i] = reads[0] for every i
    Reduce,  ///< writes[i] = the reduction of every read
    Signal,  ///< signal every channel (after earlier data on it)
    Wait,    ///< wait for the next signal on every channel
    Flush,   ///< earlier data on every channel has left its source
    Barrier, ///< every thread of the block reaches this point
  };
  Kind kind;
  llvm::SmallVector<ActionOperand, 4> reads;
  llvm::SmallVector<ActionOperand, 2> writes;
  llvm::SmallVector<mlir::FlatSymbolRefAttr, 2> channels; ///< sync actions

  bool isData() const { return kind == Kind::Copy || kind == Kind::Reduce; }

  /// Every channel the action names: its operands' channels (in operand
  /// order, reads first) or its sync channels.
  llvm::SmallVector<mlir::FlatSymbolRefAttr, 4> namedChannels() const {
    llvm::SmallVector<mlir::FlatSymbolRefAttr, 4> out;
    for (llvm::ArrayRef<ActionOperand> list :
         {llvm::ArrayRef<ActionOperand>(reads),
          llvm::ArrayRef<ActionOperand>(writes)})
      for (const ActionOperand &o : list)
        if (o.via)
          out.push_back(o.via);
    out.append(channels.begin(), channels.end());
    return out;
  }
};

/// The primitive actions of `op`, in order; none for an operation without
/// CommOpInterface (structure, declarations).
llvm::SmallVector<Action, 4> getActions(mlir::Operation *op);

} // namespace mscl

#endif // MSCL_IR_MSCLSEMANTICS_H
