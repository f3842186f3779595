//===- Evaluation.cpp - What every chunk holds after one launch -----------===//

#include "Evaluation.h"
#include "Schedule.h"

using namespace mlir;
using namespace mscl;
using namespace mscl::verify;

Evaluation::Evaluation(const ProgramModel &model, ExprPool &pool,
                       llvm::ArrayRef<InputChunk> inputs,
                       std::optional<int64_t> residue)
    : model(model), pool(pool), residue(residue) {
  // Uninitialised everywhere, last elements too. `last` may hold residues
  // at which a chunk has no last element (they are never asked about):
  // "all" needs no bits, where the chunk's own set would take K of them.
  exprs.assign(model.numSlots(), ExprPool::kUninitialised);
  lastOf.assign(model.numSlots(), 0);
  lasts.push_back(Residues(model.layout.chunks(), /*all=*/true));
  for (const InputChunk &in : inputs)
    exprs[in.slot] = pool.leaf(in.rank, in.chunk);
}

const Residues &Evaluation::lastElement(int64_t slot) const {
  auto [buffer, index] = model.chunkOfSlot(slot);
  return model.layout.lastElement(model.buffers[buffer].user, index);
}

Residues Evaluation::lastMissing(int64_t slot) const {
  const Residues &held = last(slot);
  if (held.full())
    return Residues::none(model.layout.chunks());
  return lastElement(slot).minus(held);
}

void Evaluation::store(int64_t slot, SlotValue value, Operation *writer) {
  exprs[slot] = value.expr;
  writers[slot] = writer;
  if (residue)
    return; // `last` is unused
  if (value.last.full()) {
    lastOf[slot] = 0;
  } else if (lastOf[slot] != 0) {
    lasts[lastOf[slot]] = std::move(value.last);
  } else {
    lastOf[slot] = static_cast<uint32_t>(lasts.size());
    lasts.push_back(std::move(value.last));
  }
}

void Evaluation::execute(const Step &step) {
  // Every source is read before any destination is written.
  struct Result {
    int64_t slot;
    SlotValue value;
  };
  llvm::SmallVector<Result, 4> results;
  llvm::SmallVector<ExprId, 8> operands;
  size_t previous = 0; // first result of the previous move
  for (const Move &move : step.moves) {
    size_t first = results.size();
    if (move.sources().empty())
      continue;
    for (int64_t j = 0; j < move.dst.count; ++j) {
      int64_t dst = model.slot(move.dst, j);
      // The residues at which this chunk step moves the last elements.
      Residues moved = model.movesLast(move, j);
      if (residue && !moved.test(*residue))
        continue; // this residue's last element stays as it is
      Result result{dst, {}};
      if (move.sharesSources && !residue && previous + j < first) {
        // Same sources as the previous move: same value, computed once.
        result.value = results[previous + j].value;
      } else {
        operands.clear();
        for (const Range &src : move.sources())
          operands.push_back(exprs[model.slot(src, j)]);
        result.value.expr = move.switchReduce ? pool.switchReduce(operands)
                                              : pool.reduce(operands);
      }
      if (!residue) {
        // The last element holds the value where the step moved it from
        // sources whose last elements held theirs; where it did not move
        // it, it keeps the old value, valid where the old one was if the
        // value did not change.
        result.value.last = moved;
        for (const Range &src : move.sources())
          result.value.last &= last(model.slot(src, j));
        if (exprs[dst] == result.value.expr)
          result.value.last |= last(dst).minus(moved);
      }
      results.push_back(std::move(result));
    }
    previous = first;
  }
  for (Result &result : results)
    store(result.slot, std::move(result.value), step.op);
}

bool Evaluation::run() {
  Scheduler scheduler(model);
  return scheduler.run(
      [&](int block, int step) { execute(model.blocks[block].steps[step]); });
}
