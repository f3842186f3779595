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
  chunkOf.resize(model.numSlots());
  for (int64_t r = 0; r < model.ranks; ++r)
    for (const BufferInfo &buffer : model.buffers)
      for (int64_t j = 0; j < buffer.chunks; ++j)
        chunkOf[model.slot(r, &buffer - model.buffers.data(), j)] = {
            buffer.user, j};
  // Uninitialised everywhere, last elements too. `last` may hold residues
  // at which a chunk has no last element (they are never asked about):
  // "all" needs no bits, where the chunk's own set would take K of them.
  values.assign(model.numSlots(),
                SlotValue{ExprPool::kUninitialised,
                          Residues(model.layout.chunks(), /*all=*/true)});
  writers.assign(model.numSlots(), nullptr);
  for (const InputChunk &in : inputs)
    values[in.slot].expr = pool.leaf(in.rank, in.chunk);
}

const Residues &Evaluation::lastElement(int64_t slot) const {
  return model.layout.lastElement(chunkOf[slot].first, chunkOf[slot].second);
}

Residues Evaluation::lastMissing(int64_t slot) const {
  const Residues &held = values[slot].last;
  if (held.full())
    return Residues::none(model.layout.chunks());
  return lastElement(slot).minus(held);
}

void Evaluation::execute(const Step &step) {
  // Every source is read before any destination is written.
  struct Result {
    int64_t slot;
    SlotValue value;
  };
  llvm::SmallVector<Result, 4> results;
  llvm::SmallVector<ExprId, 8> exprs;
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
        exprs.clear();
        for (const Range &src : move.sources())
          exprs.push_back(values[model.slot(src, j)].expr);
        result.value.expr = move.switchReduce ? pool.switchReduce(exprs)
                                              : pool.reduce(exprs);
      }
      if (!residue) {
        // The last element holds the value where the step moved it from
        // sources whose last elements held theirs; where it did not move
        // it, it keeps the old value, valid where the old one was if the
        // value did not change.
        result.value.last = moved;
        for (const Range &src : move.sources())
          result.value.last &= values[model.slot(src, j)].last;
        const SlotValue &old = values[dst];
        if (old.expr == result.value.expr)
          result.value.last |= old.last.minus(moved);
      }
      results.push_back(std::move(result));
    }
    previous = first;
  }
  for (Result &result : results) {
    values[result.slot] = std::move(result.value);
    writers[result.slot] = step.op;
  }
}

bool Evaluation::run() {
  Scheduler scheduler(model);
  return scheduler.run(
      [&](int block, int step) { execute(model.blocks[block].steps[step]); });
}
