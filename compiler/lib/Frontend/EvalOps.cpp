//===- EvalOps.cpp - Operations: placement checks and emission ------------===//
//
// Every operation is checked where it is written, so that the error points
// at the source: the channel kind supports it, it runs on the channel's
// source rank, remote operands live on the channel's other end and local
// ones on the block's rank, chunk counts agree, LL puts write scratch
// buffers (which thereby become packet buffers) and no scratch buffer is
// written both by LL puts and plainly.
//
//===----------------------------------------------------------------------===//

#include "Evaluator.h"

#include "mlir/IR/Diagnostics.h"

using namespace mscclc;
using namespace mscclc::detail;

namespace {

/// "an LL memory channel", "a port channel", ... for messages.
std::string describeChannel(const ChannelValue &ch) {
  switch (ch.kind) {
  case ChannelKind::Memory:
    return ch.protocol == Protocol::LL ? "an LL memory channel"
                                       : "an HB memory channel";
  case ChannelKind::Port:
    return "a port channel";
  case ChannelKind::Switch:
    return "a switch channel";
  }
  return "a channel";
}

} // namespace

std::string Evaluator::channelName(const ChannelValue &ch) const {
  std::string name;
  switch (ch.kind) {
  case ChannelKind::Memory:
    name = (ch.protocol == Protocol::LL ? "mem_ll_" : "mem_hb_") +
           std::to_string(ch.src) + "_" + std::to_string(ch.dst);
    break;
  case ChannelKind::Port:
    name = "port_" + std::to_string(ch.src) + "_" + std::to_string(ch.dst);
    break;
  case ChannelKind::Switch:
    name = "switch_" + std::to_string(ch.first) + "_" + std::to_string(ch.last);
    break;
  }
  if (ch.id != 0)
    name += "_id" + std::to_string(ch.id);
  return name;
}

std::optional<std::string> Evaluator::useChannel(const ChannelValue &ch,
                                                 mlir::LocationAttr chLoc,
                                                 mlir::Location opLoc) {
  auto [it, inserted] =
      channelIndex.try_emplace(ch.key(), prog.channels.size());
  if (!inserted) {
    const Channel &c = prog.channels[it->second];
    auto &[tb, firstUse] = channelUser[it->second];
    // Switch channels have no semaphores; every member rank uses its own
    // end, and one block per rank may use it.
    if (ch.kind == ChannelKind::Switch || tb == on->tb)
      return c.name;
    if (reported.insert(mlir::LocationAttr(opLoc)).second) {
      diag.error(opLoc,
                 "channel " + c.name + " is already used by tb " +
                     llvm::Twine(tb) + " of rank " + llvm::Twine(on->rank) +
                     "; a channel belongs to one thread block (give this "
                     "one its own channel id)",
                 mlir::Location(firstUse), "first used here");
      if (diag.limitReached())
        stop = true;
    }
    return std::nullopt;
  }
  channelUser.emplace_back(on->tb, opLoc);
  Channel c{channelName(ch), ch.kind, ch.protocol, ch.src,
            ch.dst,          {},      ch.id,       mlir::Location(chLoc)};
  if (ch.kind == ChannelKind::Switch) {
    c.src = c.dst = 0;
    for (int64_t r = ch.first; r < ch.last; ++r)
      c.ranks.push_back(r);
  }
  prog.channels.push_back(std::move(c));
  return prog.channels.back().name;
}

ChunkRef Evaluator::toRef(const Value &chunk) const {
  return ChunkRef{chunk.buffer->name, chunk.rank, chunk.index, chunk.count,
                  mlir::Location(chunk.loc)};
}

void Evaluator::emit(Operation op) {
  if (++numOps > kMaxOperations) {
    fatal(op.loc, "the program has more than " + llvm::Twine(kMaxOperations) +
                      " operations");
    return;
  }
  on->sink->push_back(std::move(op));
}

std::optional<std::vector<Value>> Evaluator::evalChunkOperands(
    llvm::ArrayRef<std::unique_ptr<ast::Expr>> args, bool sourcesMayExcept) {
  std::vector<Value> operands;
  bool ok = true;
  for (size_t i = 0; i < args.size(); ++i) {
    // The destination (argument 0) never takes `except`.
    std::optional<Value> v = evalChunkOperand(*args[i], sourcesMayExcept && i > 0);
    if (v)
      operands.push_back(*v);
    else
      ok = false;
  }
  if (!ok)
    return std::nullopt;
  return operands;
}

std::optional<Value> Evaluator::evalChunkOperand(const ast::Expr &expr,
                                                 bool exceptOk) {
  const ast::Expr *chunkExpr = &expr;
  auto *x = llvm::dyn_cast<ast::ExceptExpr>(&expr);
  if (x)
    chunkExpr = x->chunks.get();
  // A reduce source written as a range may be empty: it then adds nothing
  // (rank-ordered sums read `recv@r[0..r], input@r[0], recv@r[r + 1..N]`).
  auto *range = llvm::dyn_cast<ast::ChunkExpr>(chunkExpr);
  Value v = exceptOk && range && !x ? evalChunk(*range, /*emptyIsNoSource=*/true)
                                    : eval(*chunkExpr);
  if (v.isPoison())
    return std::nullopt;
  if (v.kind != Value::Kind::Chunk) {
    error(chunkExpr->getLoc(),
          "expected a chunk reference, found " + describe(v.kind));
    return std::nullopt;
  }
  if (!x)
    return v;
  if (!exceptOk) { // Sema prevents this; stay safe regardless.
    error(x->getLoc(), "'except' is not allowed here");
    return std::nullopt;
  }
  std::optional<int64_t> excluded = evalInt(*x->excluded);
  if (!excluded)
    return std::nullopt;
  // `excluded` counts in the buffer as written; an in-place rewrite shifted
  // the chunk's index but not the number.
  int64_t shift = v.index - v.writtenIndex;
  if (*excluded < v.writtenIndex || *excluded >= v.writtenIndex + v.count) {
    error(x->excluded->getLoc(),
          "the excluded chunk " + llvm::Twine(*excluded) +
              " is not among chunks " + llvm::Twine(v.writtenIndex) + ".." +
              llvm::Twine(v.writtenIndex + v.count));
    return std::nullopt;
  }
  v.except = *excluded + shift;
  return v;
}

bool Evaluator::expandSources(const Value &dst, llvm::ArrayRef<Value> srcs,
                              std::vector<Value> &pieces) {
  bool ok = true;
  for (const Value &s : srcs) {
    if (s.count == dst.count && !s.except) {
      pieces.push_back(s);
      continue;
    }
    if (s.count % dst.count != 0) {
      error(s.loc, "a reduce source of " + llvm::Twine(s.count) +
                       " chunks does not split into sources of the "
                       "destination's " +
                       llvm::Twine(dst.count));
      ok = false;
      continue;
    }
    if (s.except && (*s.except - s.index) % dst.count != 0) {
      error(s.loc, "the excluded chunk must start one of the " +
                       llvm::Twine(dst.count) + "-chunk sources");
      ok = false;
      continue;
    }
    for (int64_t k = s.index; k < s.index + s.count; k += dst.count) {
      if (s.except && *s.except == k)
        continue;
      Value piece = s;
      piece.index = k;
      piece.count = dst.count;
      piece.except.reset();
      pieces.push_back(piece);
    }
  }
  return ok;
}

bool Evaluator::checkOnRank(const Value &chunk, int64_t rank,
                            llvm::StringRef role, llvm::StringRef why) {
  if (chunk.rank == rank)
    return true;
  error(chunk.loc, role + " must be on rank " + llvm::Twine(rank) + " (" + why +
                       "), not on rank " + llvm::Twine(chunk.rank));
  return false;
}

bool Evaluator::checkSameCount(const Value &dst, const Value &src) {
  if (dst.count == src.count)
    return true;
  error(src.loc, "chunk count mismatch: the destination has " +
                     llvm::Twine(dst.count) + " chunk" +
                     (dst.count == 1 ? "" : "s") + ", this source " +
                     llvm::Twine(src.count));
  return false;
}

bool Evaluator::noteWrite(const Value &chunk, bool packet,
                          mlir::Location opLoc) {
  BufferInfo *b = chunk.buffer;
  if (b->kind == BufferInfo::Kind::Input && !inPlace &&
      collective != Collective::Custom) {
    error(chunk.loc, "the input buffer is read-only (the collective is not "
                     "'inplace')");
    return false;
  }
  if (packet && b->kind != BufferInfo::Kind::Scratch) {
    error(chunk.loc,
          "an LL put must write into a scratch buffer, not '" + b->name + "'");
    return false;
  }
  if (b->kind != BufferInfo::Kind::Scratch)
    return true;
  BufferInfo::Writes kind =
      packet ? BufferInfo::Writes::Packet : BufferInfo::Writes::Plain;
  if (b->writes == BufferInfo::Writes::None) {
    b->writes = kind;
    b->firstWrite = opLoc;
    prog.scratch[b->scratchIndex].packet = packet;
    return true;
  }
  if (b->writes == kind)
    return true;
  if (!reported.insert(mlir::LocationAttr(opLoc)).second)
    return false;
  diag.error(opLoc,
             "scratch buffer '" + b->name + "' is written " +
                 (packet ? "by an LL put here and plainly elsewhere"
                         : "plainly here and by LL puts elsewhere") +
                 "; a scratch buffer holds either LL packets or plain data",
             mlir::Location(b->firstWrite),
             packet ? "first written plainly here"
                    : "first written by an LL put here");
  if (diag.limitReached())
    stop = true;
  return false;
}

void Evaluator::evalLocalOp(const ast::CallExpr &e, BuiltinFn kind) {
  if (!on) {
    error(e.getLoc(), "operation '" + e.callee + "' outside an 'on' block");
    return;
  }
  if (kind == BuiltinFn::Barrier) {
    emit(Operation{OpKind::Barrier, "", std::nullopt, {}, 0, {}, e.getLoc()});
    return;
  }
  std::optional<std::vector<Value>> evaluated =
      evalChunkOperands(e.args, kind == BuiltinFn::Reduce);
  if (!evaluated)
    return;
  std::vector<Value> &operands = *evaluated;
  const Value &dst = operands[0];
  std::vector<Value> srcs;
  if (kind == BuiltinFn::Copy) {
    srcs.push_back(operands[1]);
    if (!checkSameCount(dst, srcs[0]))
      return;
  } else {
    if (!expandSources(dst, llvm::ArrayRef<Value>(operands).drop_front(), srcs))
      return;
    if (srcs.size() < 2) {
      error(e.getLoc(), "'reduce' needs at least two sources, got " +
                            llvm::Twine(srcs.size()));
      return;
    }
  }
  bool ok = checkOnRank(dst, on->rank, "a local operand", "the block's rank");
  for (const Value &s : srcs)
    ok &= checkOnRank(s, on->rank, "a local operand", "the block's rank");
  if (!ok || !noteWrite(dst, false, e.getLoc()))
    return;
  Operation op{kind == BuiltinFn::Copy ? OpKind::Copy : OpKind::Reduce,
               "",
               toRef(dst),
               {},
               0,
               {},
               e.getLoc()};
  for (const Value &s : srcs)
    op.srcs.push_back(toRef(s));
  emit(std::move(op));
}

void Evaluator::evalMethod(const ast::MethodCallExpr &e) {
  Value recv = eval(*e.receiver);
  if (recv.isPoison())
    return;
  if (recv.kind != Value::Kind::Channel) {
    error(e.receiver->getLoc(),
          "'." + e.method + "' needs a channel, found " + describe(recv.kind));
    return;
  }
  std::optional<ChannelMethod> m = lookupMethod(e.method);
  if (!m)
    return; // Sema reported it
  if (!on) {
    error(e.getLoc(), "operation '" + e.method + "' outside an 'on' block");
    return;
  }
  const ChannelValue &ch = recv.channel;
  bool isMemory = ch.kind == ChannelKind::Memory;
  bool isHB = isMemory && ch.protocol == Protocol::HB;
  bool isLL = isMemory && ch.protocol == Protocol::LL;
  bool isPort = ch.kind == ChannelKind::Port;
  bool isSwitch = ch.kind == ChannelKind::Switch;

  // Which channels support which operations (language.md, "Operations").
  const char *needs = nullptr;
  OpKind kind = OpKind::Put;
  switch (*m) {
  case ChannelMethod::Put:
    kind = OpKind::Put;
    needs = isSwitch ? "a memory or port channel" : nullptr;
    break;
  case ChannelMethod::PutSignal:
    kind = OpKind::PutSignal;
    needs = isHB || isPort ? nullptr : "an HB memory channel or a port channel";
    break;
  case ChannelMethod::PutSignalFlush:
    kind = OpKind::PutSignalFlush;
    needs = isHB || isPort ? nullptr : "an HB memory channel or a port channel";
    break;
  case ChannelMethod::Get:
    kind = OpKind::Get;
    needs = isHB ? nullptr : "an HB memory channel";
    break;
  case ChannelMethod::ReadReduce:
    kind = OpKind::ReadReduce;
    needs = isHB ? nullptr : "an HB memory channel";
    break;
  case ChannelMethod::Signal:
    kind = OpKind::Signal;
    needs = isHB || isPort ? nullptr : "an HB memory channel or a port channel";
    break;
  case ChannelMethod::Wait:
    kind = OpKind::Wait;
    needs = isHB || isPort ? nullptr : "an HB memory channel or a port channel";
    break;
  case ChannelMethod::Flush:
    // A no-op on memory channels (their puts complete in order), allowed so
    // that code can be written for either kind.
    kind = OpKind::Flush;
    needs = isSwitch ? "a memory or port channel" : nullptr;
    break;
  case ChannelMethod::ReducePut:
    kind = OpKind::ReducePut;
    needs = isMemory ? nullptr : "a memory channel";
    break;
  case ChannelMethod::SwitchReduce:
    kind = OpKind::SwitchReduce;
    needs = isSwitch ? nullptr : "a switch channel";
    break;
  case ChannelMethod::SwitchBroadcast:
    kind = OpKind::SwitchBroadcast;
    needs = isSwitch ? nullptr : "a switch channel";
    break;
  }
  if (needs) {
    error(e.getLoc(), "'" + e.method + "' needs " + needs + ", not " +
                          describeChannel(ch) +
                          (isLL ? " (LL packets carry their own flags)" : ""));
    return;
  }
  std::string name = channelName(ch);
  if (isSwitch ? (on->rank < ch.first || on->rank >= ch.last)
               : on->rank != ch.src) {
    if (isSwitch)
      error(e.getLoc(), "rank " + llvm::Twine(on->rank) +
                            " is not a member of channel " + name + " (ranks " +
                            llvm::Twine(ch.first) + ".." +
                            llvm::Twine(ch.last) + ")");
    else
      error(e.getLoc(), "channel " + name + " starts at rank " +
                            llvm::Twine(ch.src) +
                            "; its operations run there, not on rank " +
                            llvm::Twine(on->rank));
    return;
  }

  std::optional<std::vector<Value>> evaluated =
      evalChunkOperands(e.args, kind == OpKind::ReducePut);
  if (!evaluated)
    return;
  std::vector<Value> &operands = *evaluated;

  bool ok = true;
  Operation op{kind, "", std::nullopt, {}, 0, {}, e.getLoc()};
  int64_t self = on->rank;
  const char *selfWhy = "the block's rank";
  switch (kind) {
  case OpKind::Put:
  case OpKind::PutSignal:
  case OpKind::PutSignalFlush: {
    const Value &dst = operands[0], &src = operands[1];
    ok = checkOnRank(dst, ch.dst, "the put destination",
                     "the channel's destination") &
         checkOnRank(src, self, "the put source", selfWhy);
    if (!ok || !checkSameCount(dst, src) || !noteWrite(dst, isLL, e.getLoc()))
      return;
    op.dst = toRef(dst);
    op.srcs.push_back(toRef(src));
    break;
  }
  case OpKind::Get:
  case OpKind::ReadReduce: {
    const Value &dst = operands[0], &src = operands[1];
    ok = checkOnRank(dst, self, "the destination", selfWhy) &
         checkOnRank(src, ch.dst, "the remote source",
                     "the channel's destination");
    if (!ok || !checkSameCount(dst, src) || !noteWrite(dst, false, e.getLoc()))
      return;
    op.dst = toRef(dst);
    op.srcs.push_back(toRef(src));
    break;
  }
  case OpKind::ReducePut: {
    const Value &dst = operands[0];
    std::vector<Value> srcs;
    if (!expandSources(dst, llvm::ArrayRef<Value>(operands).drop_front(), srcs))
      return;
    ok = checkOnRank(dst, ch.dst, "the put destination",
                     "the channel's destination");
    for (const Value &s : srcs)
      ok &= checkOnRank(s, self, "a local source", selfWhy);
    if (!ok || !noteWrite(dst, isLL, e.getLoc()))
      return;
    if (srcs.empty()) {
      error(e.getLoc(), "'reduce_put' needs at least one source");
      return;
    }
    op.dst = toRef(dst);
    for (const Value &s : srcs)
      op.srcs.push_back(toRef(s));
    break;
  }
  case OpKind::SwitchReduce:
  case OpKind::SwitchBroadcast: {
    // Both operands name chunks of this rank: the switch reads (reduce) or
    // writes (broadcast) the same chunk on every member of the group.
    const Value &dst = operands[0], &src = operands[1];
    ok = checkOnRank(dst, self, "the destination", selfWhy) &
         checkOnRank(src, self, "the source", selfWhy);
    if (!ok || !checkSameCount(dst, src) || !noteWrite(dst, false, e.getLoc()))
      return;
    op.dst = toRef(dst);
    op.srcs.push_back(toRef(src));
    break;
  }
  default: // signal, wait, flush
    break;
  }
  std::optional<std::string> channel = useChannel(ch, recv.loc, e.getLoc());
  if (!channel)
    return;
  op.channel = std::move(*channel);
  emit(std::move(op));
}

void Evaluator::checkPacketReads(const std::vector<Operation> &ops) {
  auto isPacket = [&](const ChunkRef &c) {
    for (const ScratchBuffer &s : prog.scratch)
      if (s.name == c.buffer)
        return s.packet;
    return false;
  };
  for (const Operation &op : ops) {
    switch (op.kind) {
    case OpKind::Pipeline:
      checkPacketReads(op.body);
      break;
    case OpKind::Get:
    case OpKind::ReadReduce:
    case OpKind::SwitchReduce:
    case OpKind::SwitchBroadcast:
      if (isPacket(op.srcs[0]))
        error(op.srcs[0].loc,
              "'" + op.srcs[0].buffer +
                  "' holds LL packets; only local copy, reduce and "
                  "reduce_put (and puts) can read it");
      break;
    default:
      break;
    }
  }
}
