//===- Dependence.cpp - Chunk dependences inside each thread block -------===//

#include "mscl/Analysis/Dependence.h"

#include <algorithm>

using namespace mlir;
using namespace mscl;

StringRef mscl::stringifyDependenceKind(DependenceKind kind) {
  switch (kind) {
  case DependenceKind::RAW:
    return "RAW";
  case DependenceKind::WAR:
    return "WAR";
  case DependenceKind::WAW:
    return "WAW";
  }
  return "?";
}

//===----------------------------------------------------------------------===//
// SeparationTracker
//===----------------------------------------------------------------------===//

void SeparationTracker::visit(Operation *op, Operation *pipeline) {
  next += 2;
  ops[op] = {next, pipeline};
}

void SeparationTracker::enterPipeline(Operation *pipeline) {
  visit(pipeline, nullptr);
  pipes[pipeline].start = next;
}

void SeparationTracker::exitPipeline(Operation *pipeline) {
  next += 2;
  pipes[pipeline].end = next;
}

void SeparationTracker::addPoint(int64_t pos, Operation *pipeline) {
  if (!pipeline) {
    lastOuterPoint = std::max(lastOuterPoint, pos);
    return;
  }
  PipeInfo &info = pipes[pipeline];
  info.minPoint = std::min(info.minPoint, pos);
  info.maxPoint = std::max(info.maxPoint, pos);
}

void SeparationTracker::addPointAt(Operation *op, int64_t offset) {
  addPoint(getPos(op) + offset, getPipeline(op));
}

int64_t SeparationTracker::getPos(Operation *op) const {
  return ops.lookup(op).pos;
}

Operation *SeparationTracker::getPipeline(Operation *op) const {
  return ops.lookup(op).pipeline;
}

int64_t SeparationTracker::getOuterPos(Operation *op) const {
  OpInfo info = ops.lookup(op);
  return info.pipeline ? pipes.lookup(info.pipeline).start : info.pos;
}

bool SeparationTracker::isSeparated(Operation *a, Operation *b,
                                    bool loopCarried) const {
  OpInfo ia = ops.lookup(a), ib = ops.lookup(b);
  if (loopCarried) {
    // From the rest of iteration t after `a` to iteration t+1 up to `b`.
    PipeInfo p = pipes.lookup(ia.pipeline);
    return p.maxPoint > ia.pos || p.minPoint < ib.pos;
  }
  if (ia.pipeline && ia.pipeline == ib.pipeline)
    return pipes.lookup(ia.pipeline).maxPoint > ia.pos;
  bool exitA = ia.pipeline && pipes.lookup(ia.pipeline).maxPoint > ia.pos;
  bool entryB = ib.pipeline && pipes.lookup(ib.pipeline).minPoint < ib.pos;
  return exitA || entryB || lastOuterPoint > getOuterPos(a);
}

//===----------------------------------------------------------------------===//
// DependenceAnalysis
//===----------------------------------------------------------------------===//

DependenceAnalysis::DependenceAnalysis(Operation *op) {
  auto program = dyn_cast<ProgramOp>(op);
  if (!program)
    return;
  groups = SwitchGroups(program);
  size_t count = 0;
  program.walk([&](Operation *) { ++count; });
  opIndex.reserve(count);
  accesses.reserve(count);
  edges.reserve(count);
  for (auto buffer : program.getBodyBlock().getOps<BufferOp>())
    if (buffer.getPacket())
      packetBuffers.insert(buffer.getSymName());
  for (auto rank : program.getBodyBlock().getOps<RankOp>())
    for (auto tb : rank.getBody().front().getOps<ThreadBlockOp>()) {
      tracker = SeparationTracker();
      slots.clear();
      analyzeBlock(tb.getBody().front(), nullptr, 0);
    }
  slots.clear();
}

ArrayRef<Dependence> DependenceAnalysis::getDependences(Operation *op) const {
  auto it = opIndex.find(op);
  if (it == opIndex.end())
    return {};
  return edges[it->second];
}

const OpAccesses &DependenceAnalysis::getAccesses(Operation *op) const {
  static const OpAccesses none;
  auto it = opIndex.find(op);
  return it == opIndex.end() ? none : accesses[it->second];
}

unsigned DependenceAnalysis::getBufferId(StringRef name) {
  return bufferIds.try_emplace(name, bufferIds.size()).first->second;
}

DependenceAnalysis::Slot &DependenceAnalysis::getSlot(ChunkAttr chunk,
                                                      int64_t index, int walk) {
  // Buffer ids by chunk attribute: a pointer hash, not a string hash.
  auto [it, inserted] = chunkBuffers.try_emplace(chunk, 0);
  if (inserted)
    it->second = getBufferId(chunk.getBuffer());
  Key key{it->second, chunk.getRank(), index};
  if (walk == 1 && !snapshot.count(key))
    snapshot[key] = slots.lookup(key);
  return slots[key];
}

void DependenceAnalysis::analyzeBlock(Block &block, Operation *pipeline,
                                      int walk) {
  for (Operation &op : block)
    visitOp(&op, pipeline, walk);
}

/// The chunks that both `a` and `b` cover (they overlap).
static ChunkAttr intersect(ChunkAttr a, ChunkAttr b) {
  int64_t begin = std::max(a.getIndex(), b.getIndex());
  int64_t end = std::min(a.getEnd(), b.getEnd());
  return ChunkAttr::get(a.getContext(), a.getBuffer(), a.getRank(), begin,
                        end - begin);
}

void DependenceAnalysis::addEdge(const Entry &from, Operation *to,
                                 ChunkAttr access, DependenceKind kind,
                                 Operation *pipeline, int walk) {
  bool loopCarried = false;
  if (walk == 2) {
    // The second walk only adds what the first could not see: edges from
    // the previous iteration of this body.
    if (from.pipeline != pipeline || from.walk != 1)
      return;
    if (from.chunk.getIndex() == access.getIndex() &&
        !isPacketBuffer(access.getBuffer()))
      return;
    loopCarried = true;
  }
  SmallVector<Dependence, 2> &list = edges[opIndex.lookup(to)];
  for (const Dependence &dep : list)
    if (dep.source == from.op && dep.kind == kind &&
        dep.loopCarried == loopCarried)
      return;
  list.push_back({from.op, kind, intersect(from.chunk, access), loopCarried,
                  tracker.isSeparated(from.op, to, loopCarried)});
}

void DependenceAnalysis::visitOp(Operation *op, Operation *pipeline, int walk) {
  if (isa<PipelineOp>(op)) {
    Block &body = op->getRegion(0).front();
    tracker.enterPipeline(op);
    snapshot.clear();
    analyzeBlock(body, op, 1);
    analyzeBlock(body, op, 2);
    // The body may run zero times: what held before it still may.
    for (auto &[key, before] : snapshot) {
      Slot &slot = slots[key];
      for (const Entry &w : before.writers)
        if (llvm::none_of(slot.writers,
                          [&](const Entry &e) { return e.op == w.op; }))
          slot.writers.push_back(w);
      for (const Entry &r : before.readers)
        if (llvm::none_of(slot.readers,
                          [&](const Entry &e) { return e.op == r.op; }))
          slot.readers.push_back(r);
    }
    snapshot.clear();
    tracker.exitPipeline(op);
    return;
  }

  ImpliedBarriers implied = getImpliedBarriers(op);
  if (walk != 2) {
    tracker.visit(op, pipeline);
    if (implied.before)
      tracker.addPointBefore(op);
    opIndex[op] = accesses.size();
    accesses.push_back(mscl::getAccesses(op, &groups));
    edges.emplace_back();
  }
  // By index: nothing below grows `accesses`.
  const OpAccesses &acc = accesses[opIndex.lookup(op)];

  for (const ChunkAccess &read : acc.reads)
    for (int64_t i = read.chunk.getIndex(); i < read.chunk.getEnd(); ++i) {
      // addEdge touches no slot: the reference stays valid.
      Slot &slot = getSlot(read.chunk, i, walk);
      for (const Entry &w : slot.writers)
        addEdge(w, op, read.chunk, DependenceKind::RAW, pipeline, walk);
    }
  for (const ChunkAccess &write : acc.writes)
    for (int64_t i = write.chunk.getIndex(); i < write.chunk.getEnd(); ++i) {
      Slot &slot = getSlot(write.chunk, i, walk);
      for (const Entry &w : slot.writers)
        addEdge(w, op, write.chunk, DependenceKind::WAW, pipeline, walk);
      for (const Entry &r : slot.readers)
        addEdge(r, op, write.chunk, DependenceKind::WAR, pipeline, walk);
    }

  // Reads happen before writes inside one operation, so update reads first.
  for (const ChunkAccess &read : acc.reads) {
    Entry self{op, read.chunk, pipeline, walk};
    for (int64_t i = read.chunk.getIndex(); i < read.chunk.getEnd(); ++i) {
      Slot &slot = getSlot(read.chunk, i, walk);
      llvm::erase_if(slot.readers, [&](const Entry &e) {
        return tracker.isOuterSeparatedFromNow(e.op);
      });
      if (llvm::none_of(slot.readers, [&](const Entry &e) {
            return e.op == op && e.walk == walk;
          }))
        slot.readers.push_back(self);
    }
  }
  for (const ChunkAccess &write : acc.writes) {
    Entry self{op, write.chunk, pipeline, walk};
    for (int64_t i = write.chunk.getIndex(); i < write.chunk.getEnd(); ++i) {
      Slot &slot = getSlot(write.chunk, i, walk);
      slot.writers.assign(1, self);
      slot.readers.clear();
    }
  }

  if (walk != 2 && implied.after)
    tracker.addPointAfter(op);
}
