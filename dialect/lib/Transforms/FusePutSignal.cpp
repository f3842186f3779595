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

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

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

/// `Put` directly followed by a `Sync` on exactly its channel becomes
/// `Fused`.
template <typename Put, typename Sync, typename Fused>
struct FuseWithNext final : OpRewritePattern<Put> {
  using OpRewritePattern<Put>::OpRewritePattern;
  LogicalResult matchAndRewrite(Put put,
                                PatternRewriter &rewriter) const override {
    Operation *next = put->getNextNode();
    if (!isSingle<Sync>(next, put.getChannelAttr()))
      return failure();
    rewriter.eraseOp(next);
    rewriter.replaceOpWithNewOp<Fused>(put, put.getChannelAttr(),
                                       put.getDst(), put.getSrc());
    return success();
  }
};

struct FusePutSignalPass final
    : mscl::impl::MsclFusePutSignalBase<FusePutSignalPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseWithNext<PutOp, SignalOp, PutWithSignalOp>,
                 FuseWithNext<PutWithSignalOp, FlushOp,
                              PutWithSignalAndFlushOp>>(&getContext());
    // Only these rewrites: no folding, and the regions (thread blocks,
    // pipeline bodies) stay as they are.
    GreedyRewriteConfig config;
    config.enableFolding(false).setRegionSimplificationLevel(
        GreedySimplifyRegionLevel::Disabled);
    bool changed = false;
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     config, &changed)))
      return signalPassFailure();
    if (!changed)
      markAllAnalysesPreserved();
  }
};

} // namespace
