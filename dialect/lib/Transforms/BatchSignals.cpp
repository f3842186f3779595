//===- BatchSignals.cpp - One signal for a run of put_with_signal --------===//
//
// `put_with_signal @a ...; put_with_signal @b ...` on HB memory channels
// (or `put @a; signal [@a]; put @b; signal [@b]`) costs a block barrier and
// a system-scope fence per signal. As
// `put @a ...; put @b ...; signal [@a, @b]` the puts run back to back and
// one barrier and one fence cover all of them. Moving put @b ahead of the
// signal on @a is invisible to peers: a signal covers only its own
// channel's puts, and no wait is crossed.
//
//===----------------------------------------------------------------------===//

#include "FusionUtils.h"
#include "mscl/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace mscl {
#define GEN_PASS_DEF_MSCLBATCHSIGNALS
#include "mscl/Transforms/Passes.h.inc"
} // namespace mscl

using namespace mlir;
using namespace mscl;

namespace {

struct BatchSignalsPass final
    : mscl::impl::MsclBatchSignalsBase<BatchSignalsPass> {
  /// One put and its signal: a put_with_signal, or a put directly followed
  /// by a signal on exactly its channel.
  struct Item {
    Operation *put;
    Operation *signal; // null for put_with_signal
    FlatSymbolRefAttr channel;
    ChunkAttr dst, src;
  };

  bool isHB(FlatSymbolRefAttr ref) const {
    ChannelOp channel = channelTable->lookup(ref);
    return channel && channel.getKind() == ChannelKind::memory &&
           channel.getProtocol() && *channel.getProtocol() == Protocol::HB;
  }

  std::optional<Item> getItem(Operation *op) const {
    if (auto put = dyn_cast_or_null<PutWithSignalOp>(op)) {
      if (isHB(put.getChannelAttr()))
        return Item{op, nullptr, put.getChannelAttr(), put.getDst(),
                    put.getSrc()};
    } else if (auto put = dyn_cast_or_null<PutOp>(op)) {
      auto signal = dyn_cast_or_null<SignalOp>(op->getNextNode());
      if (signal && signal.getChannels().size() == 1 &&
          signal.getChannels()[0] == put.getChannelAttr() &&
          isHB(put.getChannelAttr()))
        return Item{op, signal, put.getChannelAttr(), put.getDst(),
                    put.getSrc()};
    }
    return std::nullopt;
  }

  static Operation *last(const Item &item) {
    return item.signal ? item.signal : item.put;
  }

  /// Rewrites the run of items starting at `first`; returns the op after
  /// the run.
  Operation *batch(Operation *first, OpBuilder &builder) {
    SmallVector<Item> run;
    SmallVector<Attribute> channels;
    Operation *op = first;
    while (std::optional<Item> item = getItem(op)) {
      if (llvm::is_contained(channels, item->channel))
        break;
      run.push_back(*item);
      channels.push_back(item->channel);
      op = last(*item)->getNextNode();
    }
    if (run.size() < 2)
      return last(run.front())->getNextNode();
    SmallVector<Location> locs;
    for (const Item &item : run) {
      builder.setInsertionPoint(item.put);
      PutOp::create(builder, item.put->getLoc(), item.channel, item.dst,
                    item.src);
      locs.push_back(last(item)->getLoc());
    }
    builder.setInsertionPointAfter(last(run.back()));
    SignalOp::create(builder, builder.getFusedLoc(locs),
                     builder.getArrayAttr(channels));
    for (const Item &item : run) {
      if (item.signal)
        item.signal->erase();
      item.put->erase();
    }
    changed = true;
    return op;
  }

  void runOnOperation() override {
    channelTable.emplace(getOperation());
    changed = false;
    OpBuilder builder(&getContext());
    forEachOpList(getOperation(), [&](Block &block) {
      Operation *op = block.empty() ? nullptr : &block.front();
      while (op)
        op = getItem(op) ? batch(op, builder) : op->getNextNode();
    });
    if (!changed)
      markAllAnalysesPreserved();
  }

  std::optional<ChannelTable> channelTable;
  bool changed = false;
};

} // namespace
