//===- FusePutSignal.cpp - put + signal (+ flush) on one channel ---------===//
//
// A put directly followed by a signal on exactly its channel is one
// put_with_signal (one FIFO entry on a port channel); directly followed by
// a flush of that channel too, it is put_with_signal_and_flush. Only
// adjacent ops fuse: a put separated from its signal by puts on other
// channels keeps one barrier for all of them under a merged signal.
//
//===----------------------------------------------------------------------===//

#include "FusionUtils.h"
#include "mscl/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace mscl {
#define GEN_PASS_DEF_MSCLFUSEPUTSIGNAL
#include "mscl/Transforms/Passes.h.inc"
} // namespace mscl

using namespace mlir;
using namespace mscl;

namespace {

/// Whether `op` is a `SyncOp` on exactly `channel`.
template <typename SyncOp>
bool isSingle(Operation *op, FlatSymbolRefAttr channel) {
  auto sync = dyn_cast_or_null<SyncOp>(op);
  return sync && sync.getChannels().size() == 1 &&
         sync.getChannels()[0] == channel;
}

struct FusePutSignalPass final
    : mscl::impl::MsclFusePutSignalBase<FusePutSignalPass> {
  void runOnOperation() override {
    bool changed = false;
    OpBuilder builder(&getContext());
    forEachOpList(getOperation(), [&](Block &block) {
      Operation *op = block.empty() ? nullptr : &block.front();
      while (op) {
        Operation *next = op->getNextNode();
        if (auto put = dyn_cast<PutOp>(op)) {
          if (isSingle<SignalOp>(next, put.getChannelAttr())) {
            builder.setInsertionPoint(put);
            op = PutWithSignalOp::create(builder, put.getLoc(),
                                         put.getChannelAttr(), put.getDst(),
                                         put.getSrc());
            next->erase();
            put->erase();
            next = op->getNextNode();
            changed = true;
          }
        }
        if (auto put = dyn_cast<PutWithSignalOp>(op)) {
          if (isSingle<FlushOp>(next, put.getChannelAttr())) {
            builder.setInsertionPoint(put);
            op = PutWithSignalAndFlushOp::create(builder, put.getLoc(),
                                                 put.getChannelAttr(),
                                                 put.getDst(), put.getSrc());
            next->erase();
            put->erase();
            next = op->getNextNode();
            changed = true;
          }
        }
        op = next;
      }
    });
    if (!changed)
      markAllAnalysesPreserved();
  }
};

} // namespace
