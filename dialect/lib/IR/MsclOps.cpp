//===- MsclOps.cpp - Custom syntax and local verifiers of mscl ops -------===//
//
// Verifiers here check what one operation can check alone (operand counts
// agree, no overlap inside the op). Checks that need the program's buffers
// and channels live in MsclVerifier.cpp, run once per program.
//
//===----------------------------------------------------------------------===//

#include "mscl/IR/MsclOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace mscl;

//===----------------------------------------------------------------------===//
// Custom directives
//===----------------------------------------------------------------------===//

/// `[<chunk>, <chunk>, ...]`, chunks without the `#mscl.chunk` prefix.
static ParseResult parseChunkList(OpAsmParser &parser, ArrayAttr &chunks) {
  SmallVector<Attribute> list;
  auto parseOne = [&]() -> ParseResult {
    ChunkAttr chunk;
    if (parser.parseCustomAttributeWithFallback(chunk))
      return failure();
    list.push_back(chunk);
    return success();
  };
  if (parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Square, parseOne))
    return failure();
  chunks = parser.getBuilder().getArrayAttr(list);
  return success();
}

static void printChunkList(OpAsmPrinter &printer, Operation *, ArrayAttr chunks) {
  printer << "[";
  llvm::interleaveComma(chunks, printer, [&](Attribute attr) {
    printer.printStrippedAttrOrType(cast<ChunkAttr>(attr));
  });
  printer << "]";
}

/// `[@channel <chunk>, ...]`: chunks reached through channels.
static ParseResult parseChannelChunkList(OpAsmParser &parser,
                                         ArrayAttr &channels,
                                         ArrayAttr &chunks) {
  SmallVector<Attribute> channelList, chunkList;
  auto parseOne = [&]() -> ParseResult {
    FlatSymbolRefAttr channel;
    ChunkAttr chunk;
    if (parser.parseAttribute(channel) ||
        parser.parseCustomAttributeWithFallback(chunk))
      return failure();
    channelList.push_back(channel);
    chunkList.push_back(chunk);
    return success();
  };
  if (parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Square, parseOne))
    return failure();
  channels = parser.getBuilder().getArrayAttr(channelList);
  chunks = parser.getBuilder().getArrayAttr(chunkList);
  return success();
}

static void printChannelChunkList(OpAsmPrinter &printer, Operation *,
                                  ArrayAttr channels, ArrayAttr chunks) {
  printer << "[";
  for (auto [i, pair] : llvm::enumerate(llvm::zip(channels, chunks))) {
    if (i)
      printer << ", ";
    printer.printAttribute(std::get<0>(pair));
    printer << " ";
    printer.printStrippedAttrOrType(cast<ChunkAttr>(std::get<1>(pair)));
  }
  printer << "]";
}

/// An optional `LL` or `HB` keyword.
static ParseResult parseOptionalProtocol(OpAsmParser &parser,
                                         ProtocolAttr &protocol) {
  for (Protocol candidate : {Protocol::LL, Protocol::HB})
    if (succeeded(parser.parseOptionalKeyword(stringifyProtocol(candidate)))) {
      protocol = ProtocolAttr::get(parser.getContext(), candidate);
      return success();
    }
  return success();
}

static void printOptionalProtocol(OpAsmPrinter &printer, Operation *,
                                  ProtocolAttr protocol) {
  if (protocol)
    printer << stringifyProtocol(protocol.getValue());
}

#define GET_OP_CLASSES
#include "mscl/IR/MsclOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// All chunks in `chunks` hold as many chunks as `first`.
static LogicalResult verifySameCount(Operation *op, ChunkAttr first,
                                     ArrayRef<Attribute> chunks,
                                     StringRef what) {
  for (Attribute attr : chunks) {
    auto chunk = cast<ChunkAttr>(attr);
    if (chunk.getCount() != first.getCount())
      return op->emitOpError() << what << " spans " << chunk.getCount()
                               << " chunk(s) but the destination spans "
                               << first.getCount();
  }
  return success();
}

static LogicalResult verifyDistinctChannels(Operation *op, ArrayAttr channels) {
  llvm::SmallPtrSet<Attribute, 8> seen;
  for (Attribute channel : channels)
    if (!seen.insert(channel).second)
      return op->emitOpError() << "names channel " << channel << " twice";
  return success();
}

//===----------------------------------------------------------------------===//
// Structure ops
//===----------------------------------------------------------------------===//

LogicalResult ProgramOp::verify() {
  if (getRanks() % getGpusPerNode() != 0)
    return emitOpError() << "rank count " << getRanks()
                         << " is not a multiple of gpus_per_node "
                         << getGpusPerNode();
  if (getRoot() < 0 || getRoot() >= static_cast<int64_t>(getRanks()))
    return emitOpError() << "root " << static_cast<int64_t>(getRoot())
                         << " is not a rank of " << getRanks();
  return success();
}

LogicalResult BufferOp::verify() {
  StringRef name = getSymName();
  switch (getKind()) {
  case BufferKind::input:
  case BufferKind::output:
    if (name != stringifyBufferKind(getKind()))
      return emitOpError() << "the " << stringifyBufferKind(getKind())
                           << " buffer must be named @"
                           << stringifyBufferKind(getKind());
    if (getPacket())
      return emitOpError() << "only scratch buffers hold LL packets";
    break;
  case BufferKind::scratch:
    if (name == "input" || name == "output")
      return emitOpError() << "a scratch buffer may not be named @" << name;
    break;
  }
  return success();
}

LogicalResult ChannelOp::verify() {
  if (getSrc() == getDst())
    return emitOpError() << "connects rank " << getSrc() << " to itself";
  if (getKind() == ChannelKind::memory && !getProtocol())
    return emitOpError() << "memory channel needs a protocol (LL or HB)";
  if (getKind() == ChannelKind::port && getProtocol())
    return emitOpError() << "port channels take no protocol";
  return success();
}

LogicalResult SwitchChannelOp::verify() {
  ArrayRef<int64_t> ranks = getRanks();
  if (ranks.size() < 2)
    return emitOpError() << "switch group needs at least two ranks";
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] < 0)
      return emitOpError() << "negative rank " << ranks[i] << " in group";
    if (i > 0 && ranks[i] <= ranks[i - 1])
      return emitOpError() << "group ranks must be sorted and distinct";
  }
  return success();
}

LogicalResult RankOp::verifyRegions() {
  llvm::SmallDenseMap<int64_t, int64_t> blockOwner; // block id -> first id
  for (Operation &op : getBody().front()) {
    auto tb = dyn_cast<ThreadBlockOp>(op);
    if (!tb)
      return op.emitOpError() << "must be inside an mscl.threadblock";
    int64_t first = tb.getId();
    for (int64_t b = first; b < first + static_cast<int64_t>(tb.getGroup());
         ++b) {
      auto [it, inserted] = blockOwner.try_emplace(b, first);
      if (!inserted)
        return tb.emitOpError() << "thread block " << b
                                << " already belongs to the block starting at "
                                << it->second << " on rank " << getRank();
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Thread-block ops
//===----------------------------------------------------------------------===//

template <typename PutLike>
static LogicalResult verifyPutLike(PutLike op) {
  return verifySameCount(op, op.getDst(), {op.getSrc()}, "source");
}

LogicalResult PutOp::verify() { return verifyPutLike(*this); }
LogicalResult PutWithSignalOp::verify() { return verifyPutLike(*this); }
LogicalResult PutWithSignalAndFlushOp::verify() { return verifyPutLike(*this); }
LogicalResult GetOp::verify() { return verifyPutLike(*this); }
LogicalResult SwitchReduceOp::verify() { return verifyPutLike(*this); }
LogicalResult SwitchBroadcastOp::verify() { return verifyPutLike(*this); }

LogicalResult SignalOp::verify() {
  return verifyDistinctChannels(*this, getChannels());
}
LogicalResult WaitOp::verify() {
  return verifyDistinctChannels(*this, getChannels());
}
LogicalResult FlushOp::verify() {
  return verifyDistinctChannels(*this, getChannels());
}

LogicalResult CopyOp::verify() {
  if (failed(verifySameCount(*this, getDst(), {getSrc()}, "source")))
    return failure();
  if (getDst().overlaps(getSrc()))
    return emitOpError() << "source and destination overlap";
  return success();
}

LogicalResult ReduceOp::verify() {
  return verifySameCount(*this, getDst(), getSrcs().getValue(), "source");
}

LogicalResult ReadReduceOp::verify() {
  if (getChannels().size() != getRemotes().size())
    return emitOpError() << "needs one channel per remote chunk";
  if (getRemotes().empty())
    return emitOpError() << "needs at least one remote chunk";
  if (failed(verifyDistinctChannels(*this, getChannels())) ||
      failed(verifySameCount(*this, getDst(), getSrcs().getValue(), "source")))
    return failure();
  return verifySameCount(*this, getDst(), getRemotes().getValue(),
                         "remote source");
}

LogicalResult ReducePutOp::verify() {
  if (getChannels().size() != getDsts().size())
    return emitOpError() << "needs one channel per destination";
  if (getDsts().empty())
    return emitOpError() << "needs at least one remote destination";
  if (failed(verifyDistinctChannels(*this, getChannels())))
    return failure();
  auto first = cast<ChunkAttr>(getDsts()[0]);
  if (failed(verifySameCount(*this, first, getDsts().getValue(),
                             "destination")) ||
      failed(verifySameCount(*this, first, getSrcs().getValue(), "source")))
    return failure();
  if (auto store = getStoreAttr())
    return verifySameCount(*this, first, {store}, "local store");
  return success();
}
