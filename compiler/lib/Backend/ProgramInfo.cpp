//===- ProgramInfo.cpp - Collects what kernels and plan must agree on ----===//

#include "ProgramInfo.h"

#include "llvm/Support/Path.h"

#include <cctype>

using namespace mlir;
using namespace mscl;

namespace mscclc {
namespace backend {

unsigned sourceLine(Location loc, std::string *file) {
  unsigned line = 0;
  loc->walk([&](Location inner) {
    if (auto fileLoc = dyn_cast<FileLineColLoc>(inner)) {
      line = fileLoc.getLine();
      if (file)
        *file =
            llvm::sys::path::filename(fileLoc.getFilename().getValue()).str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return line;
}

std::string sanitize(llvm::StringRef name) {
  std::string out;
  for (char c : name)
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0])))
    out.insert(out.begin(), '_');
  return out;
}

std::string kernelName(const ProgramInfo &info, int64_t rank) {
  return "mscclc_" + sanitize(info.name) + "_rank" + std::to_string(rank);
}

std::string premulKernelName(const ProgramInfo &info) {
  return "mscclc_" + sanitize(info.name) + "_premul";
}

const BufferInfo *ProgramInfo::lookupBuffer(llvm::StringRef name) const {
  auto it = bufferIndex.find(name);
  return it == bufferIndex.end() ? nullptr : &buffers[it->second];
}

ChannelInfo *ProgramInfo::lookupChannel(llvm::StringRef name) const {
  auto it = channelByName.find(name);
  return it == channelByName.end() ? nullptr : it->second;
}

SwitchInfo *ProgramInfo::lookupSwitch(llvm::StringRef name) const {
  auto it = switchByName.find(name);
  return it == switchByName.end() ? nullptr : it->second;
}

/// The user- or scratch-buffer class name used in peerBuffers.
static std::string bufferClass(const BufferInfo &buffer) {
  if (buffer.kind == BufferKind::input)
    return "input";
  if (buffer.kind == BufferKind::output)
    return "output";
  return "scratch";
}

std::optional<ProgramInfo> ProgramInfo::build(ProgramOp program) {
  ProgramInfo info;
  info.program = program;
  info.name = program.getSymName().str();
  info.ranks = static_cast<int64_t>(program.getRanks());
  info.chunks = static_cast<int64_t>(program.getChunks());
  info.layout = mscl::ChunkLayout(info.chunks);
  info.rankInfos.resize(info.ranks);
  info.rankOps.resize(info.ranks);
  for (int64_t r = 0; r < info.ranks; ++r)
    info.rankInfos[r].rank = r;

  // Declarations, in program order.
  for (Operation &op : program.getBodyBlock()) {
    if (auto buffer = dyn_cast<BufferOp>(op)) {
      BufferInfo b;
      b.name = buffer.getSymName().str();
      b.kind = buffer.getKind();
      b.chunks = static_cast<int64_t>(buffer.getChunks());
      b.packet = buffer.getPacket();
      info.bufferIndex[b.name] = info.buffers.size();
      info.buffers.push_back(b);
    } else if (auto channel = dyn_cast<ChannelOp>(op)) {
      auto c = std::make_unique<ChannelInfo>();
      c->op = channel;
      c->name = channel.getSymName().str();
      c->isPort = channel.getKind() == ChannelKind::port;
      c->isLL = !c->isPort && channel.getProtocol() == Protocol::LL;
      c->src = static_cast<int64_t>(channel.getSrc());
      c->dst = static_cast<int64_t>(channel.getDst());
      c->id = static_cast<int64_t>(channel.getId());
      if (c->src >= info.ranks || c->dst >= info.ranks) {
        channel.emitOpError() << "connects ranks outside the program";
        return std::nullopt;
      }
      RankInfo &rank = info.rankInfos[c->src];
      auto &list = c->isPort ? rank.port : rank.memory;
      c->index = static_cast<int>(list.size());
      list.push_back(c.get());
      info.channelByName[c->name] = c.get();
      info.usesPort |= c->isPort;
      info.channels.push_back(std::move(c));
    } else if (auto group = dyn_cast<SwitchChannelOp>(op)) {
      auto s = std::make_unique<SwitchInfo>();
      s->op = group;
      s->name = group.getSymName().str();
      s->ranks.assign(group.getRanks().begin(), group.getRanks().end());
      s->id = static_cast<int64_t>(group.getId());
      for (int64_t r : s->ranks) {
        if (r < 0 || r >= info.ranks) {
          group.emitOpError() << "group holds ranks outside the program";
          return std::nullopt;
        }
        s->indexOnRank[r] =
            static_cast<int>(info.rankInfos[r].switches.size());
        info.rankInfos[r].switches.push_back(s.get());
      }
      info.switchByName[s->name] = s.get();
      info.switches.push_back(std::move(s));
    }
  }
  for (BufferInfo &b : info.buffers) {
    if (b.kind == BufferKind::scratch) {
      b.scratchIndex = static_cast<int>(info.scratch.size());
      info.scratch.push_back(&b);
    }
  }

  // Reverse channels: same kind, protocol and id, from dst to src.
  for (auto &c : info.channels) {
    for (ChannelInfo *other :
         c->isPort ? info.rankInfos[c->dst].port : info.rankInfos[c->dst].memory)
      if (other->dst == c->src && other->id == c->id &&
          other->isLL == c->isLL)
        c->peerIndex = other->index;
  }

  // Channel owners, signals and waits, peer buffers, grid sizes.
  bool ok = true;
  for (Operation &op : program.getBodyBlock()) {
    auto rankOp = dyn_cast<RankOp>(op);
    if (!rankOp)
      continue;
    int64_t r = static_cast<int64_t>(rankOp.getRank());
    if (r >= info.ranks) {
      rankOp.emitOpError() << "rank outside the program";
      return std::nullopt;
    }
    info.rankOps[r] = rankOp;
    for (Operation &tbOp : rankOp.getBody().front()) {
      auto tb = dyn_cast<ThreadBlockOp>(tbOp);
      if (!tb)
        continue;
      int64_t first = static_cast<int64_t>(tb.getId());
      int64_t group = static_cast<int64_t>(tb.getGroup());
      RankInfo &rank = info.rankInfos[r];
      rank.blocks = std::max(rank.blocks, first + group);
      tb.walk([&](CommOpInterface inner) {
        SmallVector<Action, 4> actions;
        inner.getActions(actions);
        for (const Action &action : actions) {
          for (FlatSymbolRefAttr ref : action.namedChannels()) {
            StringRef name = ref.getValue();
            if (info.lookupSwitch(name)) {
              info.usesSwitch = true;
              continue;
            }
            ChannelInfo *c = info.lookupChannel(name);
            if (!c) {
              inner->emitOpError() << "refers to unknown channel @" << name;
              ok = false;
              continue;
            }
            if (c->src != r) {
              inner->emitOpError() << "uses channel @" << name
                                   << " whose source is rank " << c->src;
              ok = false;
              continue;
            }
            if (c->block >= 0 && (c->block != first || c->group != group)) {
              inner->emitOpError() << "channel @" << name
                                   << " is used by more than one thread block";
              ok = false;
              continue;
            }
            c->block = first;
            c->group = group;
            // LL channels need no semaphore: their packets carry flags.
            if (action.kind == Action::Kind::Signal && !c->isLL)
              c->signals = true;
            if (action.kind == Action::Kind::Wait && !c->isLL)
              c->waits = true;
          }
          // Which peer buffers a channel reaches, and which buffers a switch
          // channel binds to its multicast object.
          for (ArrayRef<ActionOperand> operands :
               {ArrayRef<ActionOperand>(action.reads),
                ArrayRef<ActionOperand>(action.writes)})
            for (const ActionOperand &o : operands) {
              const BufferInfo *b = info.lookupBuffer(o.chunk.getBuffer());
              if (!b || o.reach == Reach::Local)
                continue;
              if (o.reach == Reach::Group) {
                if (SwitchInfo *s = info.lookupSwitch(o.via.getValue()))
                  s->buffers.insert(bufferClass(*b));
              } else if (ChannelInfo *c = info.lookupChannel(o.via.getValue())) {
                c->peerBuffers.insert(bufferClass(*b));
              }
            }
        }
      });
    }
  }
  if (!ok)
    return std::nullopt;

  for (auto &c : info.channels) {
    if (c->peerIndex >= 0) {
      const RankInfo &peer = info.rankInfos[c->dst];
      const ChannelInfo *reverse =
          c->isPort ? peer.port[c->peerIndex] : peer.memory[c->peerIndex];
      c->peerGroup = reverse->block >= 0 ? reverse->group : 1;
    }
  }
  // Wait counter slots: memory channels, then port channels, `group` each.
  for (RankInfo &rank : info.rankInfos) {
    for (auto *list : {&rank.memory, &rank.port})
      for (ChannelInfo *c : *list)
        if (c->waits) {
          c->waitSlot = rank.waitSlots;
          rank.waitSlots += static_cast<int>(c->group);
        }
  }
  return info;
}

} // namespace backend
} // namespace mscclc
