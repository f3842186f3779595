//===- MergeSync.cpp - One signal/wait/flush op for adjacent ones --------===//
//
// `signal [@a]; signal [@b]` becomes `signal [@a, @b]` (likewise waits and
// flushes): no access lies between them, so one op with one implied
// barrier does the same, and the backend can issue the channels together.
//
//===----------------------------------------------------------------------===//

#include "FusionUtils.h"
#include "mscl/Transforms/Passes.h"

#include "llvm/ADT/SmallPtrSet.h"

namespace mscl {
#define GEN_PASS_DEF_MSCLMERGESYNC
#include "mscl/Transforms/Passes.h.inc"
} // namespace mscl

using namespace mlir;
using namespace mscl;

namespace {

ArrayAttr getChannels(Operation *op) {
  return cast<SyncOpInterface>(op).getChannels();
}

struct MergeSyncPass final : mscl::impl::MsclMergeSyncBase<MergeSyncPass> {
  void runOnOperation() override {
    bool changed = false;
    forEachOpList(getOperation(), [&](Block &block) {
      Operation *run = nullptr;
      SmallVector<Attribute> channels;
      llvm::SmallPtrSet<Attribute, 8> seen;
      auto flush = [&] {
        if (run && channels.size() != getChannels(run).size())
          cast<SyncOpInterface>(run).setChannelsAttr(
              ArrayAttr::get(&getContext(), channels));
        run = nullptr;
      };
      for (Operation &op : llvm::make_early_inc_range(block)) {
        if (run && op.getName() == run->getName() &&
            llvm::none_of(getChannels(&op), [&](Attribute channel) {
              return seen.contains(channel);
            })) {
          for (Attribute channel : getChannels(&op)) {
            channels.push_back(channel);
            seen.insert(channel);
          }
          op.erase();
          changed = true;
          continue;
        }
        flush();
        if (isa<SyncOpInterface>(op)) {
          run = &op;
          channels.assign(getChannels(&op).begin(), getChannels(&op).end());
          seen.clear();
          seen.insert(channels.begin(), channels.end());
        }
      }
      flush();
    });
    if (!changed)
      markAllAnalysesPreserved();
  }
};

} // namespace
