//===- Accesses.cpp - The chunks an mscl operation reads and writes ------===//

#include "mscl/Analysis/Accesses.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mscl;

SwitchGroups::SwitchGroups(ProgramOp program) {
  for (auto group : program.getBodyBlock().getOps<SwitchChannelOp>())
    groups[group.getSymName()].assign(group.getRanks().begin(),
                                      group.getRanks().end());
}

ArrayRef<int64_t> SwitchGroups::lookup(StringRef name) const {
  auto it = groups.find(name);
  if (it == groups.end())
    return {};
  return it->second;
}

/// Ranks of the switch channel that `op` names.
static SmallVector<int64_t, 8> switchRanks(Operation *op,
                                           FlatSymbolRefAttr channel,
                                           const SwitchGroups *groups) {
  if (groups) {
    ArrayRef<int64_t> ranks = groups->lookup(channel.getValue());
    return SmallVector<int64_t, 8>(ranks.begin(), ranks.end());
  }
  if (auto group = dyn_cast_or_null<SwitchChannelOp>(
          SymbolTable::lookupNearestSymbolFrom(op, channel)))
    return SmallVector<int64_t, 8>(group.getRanks().begin(),
                                   group.getRanks().end());
  return {};
}

/// `chunk` on every rank of `ranks`; the executing rank's copy is local.
static void addGroupAccesses(SmallVectorImpl<ChunkAccess> &out, ChunkAttr chunk,
                             ArrayRef<int64_t> ranks) {
  out.push_back({chunk, false});
  for (int64_t rank : ranks)
    if (rank != chunk.getRank())
      out.push_back({ChunkAttr::get(chunk.getContext(), chunk.getBuffer(), rank,
                                    chunk.getIndex(), chunk.getCount()),
                     true});
}

static void addList(SmallVectorImpl<ChunkAccess> &out, ArrayAttr chunks,
                    bool remote) {
  for (Attribute chunk : chunks)
    out.push_back({cast<ChunkAttr>(chunk), remote});
}

OpAccesses mscl::getAccesses(Operation *op, const SwitchGroups *groups) {
  OpAccesses acc;
  llvm::TypeSwitch<Operation *>(op)
      .Case<PutOp, PutWithSignalOp, PutWithSignalAndFlushOp>([&](auto put) {
        acc.reads.push_back({put.getSrc(), false});
        acc.writes.push_back({put.getDst(), true});
      })
      .Case<GetOp>([&](GetOp get) {
        acc.reads.push_back({get.getSrc(), true});
        acc.writes.push_back({get.getDst(), false});
      })
      .Case<CopyOp>([&](CopyOp copy) {
        acc.reads.push_back({copy.getSrc(), false});
        acc.writes.push_back({copy.getDst(), false});
      })
      .Case<ReduceOp>([&](ReduceOp reduce) {
        addList(acc.reads, reduce.getSrcs(), false);
        acc.writes.push_back({reduce.getDst(), false});
      })
      .Case<ReadReduceOp>([&](ReadReduceOp reduce) {
        addList(acc.reads, reduce.getSrcs(), false);
        addList(acc.reads, reduce.getRemotes(), true);
        acc.writes.push_back({reduce.getDst(), false});
      })
      .Case<ReducePutOp>([&](ReducePutOp reducePut) {
        addList(acc.reads, reducePut.getSrcs(), false);
        addList(acc.writes, reducePut.getDsts(), true);
        if (ChunkAttr store = reducePut.getStoreAttr())
          acc.writes.push_back({store, false});
      })
      .Case<SwitchReduceOp>([&](SwitchReduceOp sw) {
        addGroupAccesses(acc.reads, sw.getSrc(),
                         switchRanks(op, sw.getChannelAttr(), groups));
        acc.writes.push_back({sw.getDst(), false});
      })
      .Case<SwitchBroadcastOp>([&](SwitchBroadcastOp sw) {
        acc.reads.push_back({sw.getSrc(), false});
        addGroupAccesses(acc.writes, sw.getDst(),
                         switchRanks(op, sw.getChannelAttr(), groups));
      });
  return acc;
}

ImpliedBarriers mscl::getImpliedBarriers(Operation *op) {
  ImpliedBarriers result;
  if (isa<BarrierOp>(op)) {
    result.before = result.after = true;
  } else if (isa<SignalOp>(op)) {
    result.before = true;
  } else if (isa<WaitOp, FlushOp, PutWithSignalOp, PutWithSignalAndFlushOp>(
                 op)) {
    result.after = true;
  }
  return result;
}

bool mscl::isDataOp(Operation *op) {
  return isa<PutOp, PutWithSignalOp, PutWithSignalAndFlushOp, GetOp, CopyOp,
             ReduceOp, ReadReduceOp, ReducePutOp, SwitchReduceOp,
             SwitchBroadcastOp>(op);
}
