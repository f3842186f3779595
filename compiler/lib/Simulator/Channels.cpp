//===- Channels.cpp - Puts, signals and LL packets in flight -------------===//
//
// HB memory and port puts park their data in the channel's pending list;
// it reaches the destination buffer only when a later signal on the same
// channel lands, and is then tagged with that signal's clock, so only a
// wait on that signal orders a read after it. A port channel is a FIFO
// served by a proxy: its puts and signals land in order, and the put's
// source must stay unchanged until the proxy has copied it (the program
// learns that from a flush or a later signal on the channel). LL puts split
// into pieces that land on their own, in any order, each writing packets
// with the flag of the writer's pipeline iteration.
//
//===----------------------------------------------------------------------===//

#include "Machine.h"

using namespace mlir;
using namespace mscclc::sim;

/// GB/s to bytes per microsecond.
static double perUs(double gbps) { return gbps * 1e3; }

LogicalResult Machine::issuePut(int task, const Step &step, uint32_t inst,
                                int c, const ChunkRef &dst, int64_t lo,
                                int64_t hi, std::vector<Word> values,
                                int srcBuffer, int64_t srcLo,
                                double &duration) {
  if (lo >= hi)
    return success();
  Task &t = tasks[task];
  const ChannelInfo &ch = model.channels[c];
  ChannelState &cs = channels[c];
  double bytes = static_cast<double>(hi - lo) * byteSize(type);
  double start = t.time + duration;
  Access issue{task, t.clock[task], inst, false, step.op};

  if (ch.ll) {
    double took = bytes / perUs(std::min(cost.blockBandwidth / 2,
                                         cost.memLLBandwidth));
    duration += took;
    auto data = std::make_shared<std::vector<Word>>(std::move(values));
    int n = strategy->llPieces(hi - lo);
    std::vector<int64_t> cuts{lo, hi};
    for (int i = 1; i < n; ++i)
      cuts.push_back(lo + static_cast<int64_t>(strategy->rng()() %
                                               static_cast<uint64_t>(hi - lo)));
    llvm::sort(cuts);
    uint32_t put = nextPut++;
    for (size_t i = 0; i + 1 < cuts.size(); ++i) {
      if (cuts[i] == cuts[i + 1])
        continue;
      pieces.push_back({c, dst.rank, dst.buffer, cuts[i], cuts[i + 1], data,
                        cuts[i] - lo, currentFlag(t), put,
                        start + took + cost.memLLLatency, issue});
    }
    return success();
  }

  if (failed(checkWrite(task, step.op, inst, dst.rank, dst.buffer, lo, hi,
                        true)))
    return failure();
  uint64_t seq = cs.nextSeq++;
  cs.pending.push_back({seq, dst.rank, dst.buffer, lo, hi, std::move(values),
                        issue});
  ++region(dst.rank, dst.buffer).pending;
  if (ch.isPort()) {
    ++region(t.rank, srcBuffer).inflight;
    double lat = ch.crossNode ? cost.netLatency : cost.portLatency;
    double bw = ch.crossNode ? cost.netBandwidth : cost.portBandwidth;
    cs.inflight.push_back({seq, t.rank, srcBuffer, srcLo,
                           srcLo + (hi - lo), issue});
    double ready = std::max(start, cs.dataReady) + lat + bytes / perUs(bw);
    if (ch.crossNode) {
      // On the wire the bytes hold both ends' NICs, which every transfer
      // across nodes from or to those GPUs shares.
      double &send = nicSendFree[nicOf(ch.src)];
      double &receive = nicReceiveFree[nicOf(ch.dst)];
      double wireDone =
          std::max({start, send, receive}) + bytes / perUs(bw);
      send = receive = wireDone;
      ready = std::max(ready, wireDone + lat);
    }
    cs.dataReady = ready;
    cs.queue.push_back({false, seq, ready, nullptr, issue, -1});
    return success();
  }
  double bw = std::min(cost.blockBandwidth, cost.memHBBandwidth);
  double took = bytes / perUs(bw);
  // The rank's NVLink egress is shared by its blocks.
  double &link = egressFree[t.rank];
  double linkDone = std::max(start, link) + bytes / perUs(cost.memHBBandwidth);
  link = linkDone;
  duration += std::max(took, linkDone - start);
  cs.dataReady = std::max(cs.dataReady, start + duration + cost.memHBLatency);
  return success();
}

size_t Machine::nicOf(int rank) const {
  int perNic = std::max(1, static_cast<int>(cost.gpusPerNic));
  int node = rank / model.gpusPerNode, local = rank % model.gpusPerNode;
  return static_cast<size_t>(node * model.gpusPerNode + local / perNic);
}

void Machine::commit(int c, uint64_t beforeSeq, const Access &tag) {
  ChannelState &cs = channels[c];
  size_t kept = 0;
  for (size_t i = 0; i < cs.pending.size(); ++i) {
    PendingPut &put = cs.pending[i];
    if (put.seq < beforeSeq) {
      Access access = tag;
      access.op = put.issue.op;
      recordWrite(access, WriteKind::Remote, put.rank, put.buffer, put.lo,
                  put.hi, put.data.data());
      --region(put.rank, put.buffer).pending;
    } else {
      if (kept != i)
        cs.pending[kept] = std::move(put);
      ++kept;
    }
  }
  cs.pending.resize(kept);
}

LogicalResult Machine::processHead(int c) {
  ChannelState &cs = channels[c];
  QueueItem item = std::move(cs.queue.front());
  cs.queue.pop_front();
  if (!item.signal) {
    // A port transfer done: visible at the next signal, and its source is
    // read (a flush now would not wait for it).
    auto done = llvm::find_if(cs.inflight, [&](const InFlightSource &src) {
      return src.seq == item.seq;
    });
    if (done != cs.inflight.end()) {
      --region(done->rank, done->buffer).inflight;
      cs.inflight.erase(done);
    }
    return success();
  }
  commit(c, item.seq, item.tag);
  cs.landed.push_back({item.clock, item.ready, item.flow});
  return success();
}

LogicalResult Machine::deliver(size_t index) {
  Piece piece = std::move(pieces[index]);
  pieces[index] = std::move(pieces.back());
  pieces.pop_back();
  Region &reg = region(piece.rank, piece.buffer);
  splitAt(reg.packets, piece.hi);
  auto first = splitAt(reg.packets, piece.lo);
  auto last = first;
  for (; last != reg.packets.end() && last->first < piece.hi; ++last) {
    const PacketSegment &seg = last->second;
    if (seg.flag == piece.flag && seg.put != 0 && seg.put != piece.put) {
      auto diag = error(piece.issue.op);
      diag << "LL packets written twice: "
           << describe(piece.rank, piece.buffer, last->first,
                       std::min(seg.hi, piece.hi))
           << " receives packets with flag " << piece.flag
           << " from two LL puts; a packet chunk takes one put per launch "
              "(per pipeline iteration)";
      if (seg.op)
        diag.attachNote(seg.op->getLoc()) << "the other put";
      addContext(diag);
      return failure();
    }
  }
  reg.packets.erase(first, last);
  reg.packets.emplace(piece.lo,
                      PacketSegment{piece.hi, piece.flag, piece.put,
                                    piece.issue.op, piece.ready,
                                    piece.issue.task});
  std::copy(piece.data->begin() + piece.offset,
            piece.data->begin() + piece.offset + (piece.hi - piece.lo),
            reg.data.begin() + piece.lo);
  return success();
}
