//===- Accesses.cpp - The chunks an mscl operation reads and writes ------===//

#include "mscl/Analysis/Accesses.h"

#include "mlir/IR/SymbolTable.h"

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

/// Appends the chunks of `operands` as accesses: a group operand touches
/// its chunk on every rank of the switch group.
static void addOperands(SmallVectorImpl<ChunkAccess> &out, Operation *op,
                        ArrayRef<ActionOperand> operands,
                        const SwitchGroups *groups) {
  for (const ActionOperand &o : operands) {
    switch (o.reach) {
    case Reach::Local:
      out.push_back({o.chunk, false});
      break;
    case Reach::Peer:
      out.push_back({o.chunk, true});
      break;
    case Reach::Group:
      addGroupAccesses(out, o.chunk, switchRanks(op, o.via, groups));
      break;
    }
  }
}

OpAccesses mscl::getAccesses(Operation *op, const SwitchGroups *groups) {
  OpAccesses acc;
  for (const Action &action : getActions(op)) {
    addOperands(acc.reads, op, action.reads, groups);
    addOperands(acc.writes, op, action.writes, groups);
  }
  return acc;
}

ImpliedBarriers mscl::getImpliedBarriers(Operation *op) {
  // A barrier before the operation's data, or after all of it (for an
  // operation without data: only as its last action).
  ImpliedBarriers result;
  SmallVector<Action, 4> actions = getActions(op);
  if (actions.empty())
    return result;
  result.before = actions.front().kind == Action::Kind::Barrier;
  result.after = actions.back().kind == Action::Kind::Barrier;
  for (size_t i = 0; i + 1 < actions.size(); ++i)
    if (actions[i].isData() && actions[i + 1].kind == Action::Kind::Barrier)
      result.after = true;
  return result;
}

bool mscl::isDataOp(Operation *op) {
  return llvm::any_of(getActions(op),
                      [](const Action &a) { return a.isData(); });
}
