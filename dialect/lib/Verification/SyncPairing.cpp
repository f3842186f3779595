//===- SyncPairing.cpp - Every signal has its wait, every wait its signal -===//
//
// Channels are used by one thread block each, so the signals on channel c
// (a -> b) and the waits on its other end (b -> a) are two sequences in two
// blocks. The n-th wait consumes the n-th signal. Outside pipelines the two
// counts must be equal. A pipeline repeats its body a number of times known
// only at run time, so the sequences are cut into segments (a run of
// operations outside pipelines, or the operations of one pipeline body) and
// must agree segment by segment: same kind, same count per iteration, and
// pipelines with the same unit. That is sufficient for every trip count.
//
// An unmatched signal next to an unmatched wait of another rank that expects
// a signal from the same sender is reported with a "wrong peer?" note.
//
//===----------------------------------------------------------------------===//

#include "Checks.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mscl;
using namespace mscl::verify;

namespace {

struct Segment {
  Operation *pipeline = nullptr;
  int64_t count = 0;
  int first = 0; // index into the signal/wait list of the first op
};

std::vector<Segment> segmentsOf(const ProgramModel &model, int channel,
                                const std::vector<int> &steps) {
  std::vector<Segment> segments;
  const ChannelInfo &info = model.channels[channel];
  for (int i = 0, e = static_cast<int>(steps.size()); i < e; ++i) {
    Operation *pipeline = model.blocks[info.owner].steps[steps[i]].pipeline;
    if (segments.empty() || segments.back().pipeline != pipeline)
      segments.push_back({pipeline, 0, i});
    ++segments.back().count;
  }
  return segments;
}

int64_t unitOf(Operation *pipeline) {
  return pipeline ? static_cast<int64_t>(cast<PipelineOp>(pipeline).getUnit())
                  : 0;
}

std::string describe(const std::vector<Segment> &segments) {
  if (segments.empty())
    return "none";
  std::string text;
  llvm::raw_string_ostream os(text);
  for (size_t i = 0; i < segments.size(); ++i) {
    if (i)
      os << ", then ";
    os << segments[i].count;
    if (segments[i].pipeline)
      os << " per iteration of a pipeline (unit "
         << unitOf(segments[i].pipeline) << ")";
    else
      os << " outside pipelines";
  }
  return text;
}

const char *times(int64_t n) { return n == 1 ? " time" : " times"; }

/// A signal or wait that has no partner.
struct Unmatched {
  int channel;   // the channel of the op (signal: c; wait: the waiting end)
  int index;     // index into its signalSteps / waitSteps
  Operation *op; // the op
  int64_t from;  // rank the signal comes from
  int64_t to;    // rank that waits
};

class PairingChecker {
public:
  explicit PairingChecker(const ProgramModel &model) : model(model) {}

  LogicalResult run();

private:
  Operation *signalOp(int channel, int index) const {
    const ChannelInfo &info = model.channels[channel];
    return model.blocks[info.owner].steps[info.signalSteps[index]].op;
  }
  Operation *waitOp(int channel, int index) const {
    const ChannelInfo &info = model.channels[channel];
    return model.blocks[info.owner].steps[info.waitSteps[index]].op;
  }
  void comparePair(int signalChannel);
  void report();

  const ProgramModel &model;
  std::vector<std::pair<Unmatched, std::string>> signals, waits;
  bool failedShape = false;
};

} // namespace

void PairingChecker::comparePair(int c) {
  const ChannelInfo &sender = model.channels[c];
  int e = sender.otherEnd;
  std::vector<Segment> sent = sender.owner >= 0
                                  ? segmentsOf(model, c, sender.signalSteps)
                                  : std::vector<Segment>();
  std::vector<Segment> waited;
  if (e >= 0 && model.channels[e].owner >= 0)
    waited = segmentsOf(model, e, model.channels[e].waitSteps);

  std::string nameC = model.channelName(c);
  auto noWait = [&](int index, int64_t signalled, int64_t waitedCount,
                    bool perIteration) {
    std::string why;
    llvm::raw_string_ostream os(why);
    os << "signal on " << nameC << " has no matching wait: ";
    if (e < 0)
      os << "no channel from rank " << sender.dst << " to rank " << sender.src
         << " of the same kind, protocol and id is declared, so rank "
         << sender.dst << " cannot wait for it";
    else if (model.channels[e].owner < 0 || waitedCount == 0)
      os << "rank " << sender.dst << " never waits on " << model.channelName(e)
         << ", its other end"
         << (perIteration ? ", in each iteration of this signal's pipeline"
                          : "");
    else
      os << "rank " << sender.src << " signals " << nameC << " " << signalled
         << times(signalled) << (perIteration ? " per iteration" : "")
         << " but rank " << sender.dst << " waits on " << model.channelName(e)
         << " only " << waitedCount << times(waitedCount)
         << (perIteration ? " per iteration" : "");
    signals.push_back(
        {{c, index, signalOp(c, index), sender.src, sender.dst}, why});
  };
  auto noSignal = [&](int index, int64_t signalled, int64_t waitedCount,
                      bool perIteration) {
    const ChannelInfo &waiter = model.channels[e];
    std::string why;
    llvm::raw_string_ostream os(why);
    os << "wait on " << model.channelName(e) << " has no matching signal: ";
    if (sender.owner < 0 || signalled == 0)
      os << "rank " << sender.src << " never signals " << nameC
         << ", its other end"
         << (perIteration ? ", in each iteration of this wait's pipeline"
                          : "");
    else
      os << "rank " << waiter.src << " waits on " << model.channelName(e) << " "
         << waitedCount << times(waitedCount)
         << (perIteration ? " per iteration" : "") << " but rank " << sender.src
         << " signals " << nameC << " only " << signalled << times(signalled)
         << (perIteration ? " per iteration" : "");
    waits.push_back(
        {{e, index, waitOp(e, index), waiter.dst, waiter.src}, why});
  };

  size_t n = std::max(sent.size(), waited.size());
  for (size_t i = 0; i < n; ++i) {
    if (i >= waited.size()) {
      noWait(sent[i].first, sent[i].count, 0, sent[i].pipeline != nullptr);
      return;
    }
    if (i >= sent.size()) {
      noSignal(waited[i].first, 0, waited[i].count,
               waited[i].pipeline != nullptr);
      return;
    }
    const Segment &s = sent[i], &w = waited[i];
    bool sameShape = (s.pipeline == nullptr) == (w.pipeline == nullptr) &&
                     unitOf(s.pipeline) == unitOf(w.pipeline);
    if (!sameShape) {
      InFlightDiagnostic diag =
          signalOp(c, s.first)->emitError()
          << "signals on " << nameC << " do not pair up with the waits on "
          << model.channelName(e) << " in every pipeline iteration: signals "
          << describe(sent) << "; waits " << describe(waited);
      diag.attachNote(waitOp(e, w.first)->getLoc())
          << "the first wait that would consume it";
      failedShape = true;
      return;
    }
    if (s.count > w.count) {
      noWait(s.first + static_cast<int>(w.count), s.count, w.count,
             s.pipeline != nullptr);
      return;
    }
    if (w.count > s.count) {
      noSignal(w.first + static_cast<int>(s.count), s.count, w.count,
               w.pipeline != nullptr);
      return;
    }
  }
}

void PairingChecker::report() {
  // A wait that expects a signal from rank `from`, unmatched, next to an
  // unmatched signal from `from` to another rank: likely a wrong peer.
  for (auto &[signal, why] : signals) {
    InFlightDiagnostic diag = signal.op->emitError() << why;
    for (auto &[wait, waitWhy] : waits)
      if (wait.from == signal.from && wait.to != signal.to) {
        diag.attachNote(wait.op->getLoc())
            << "rank " << wait.to << " waits for a signal from rank "
            << signal.from << " here; was the signal sent to the wrong peer?";
        break;
      }
  }
  for (auto &[wait, why] : waits) {
    InFlightDiagnostic diag = wait.op->emitError() << why;
    for (auto &[signal, signalWhy] : signals)
      if (signal.from == wait.from && signal.to != wait.to) {
        diag.attachNote(signal.op->getLoc())
            << "rank " << signal.from << " signals rank " << signal.to
            << " here instead; was the signal sent to the wrong peer?";
        break;
      }
  }
}

LogicalResult PairingChecker::run() {
  for (int c = 0, e = static_cast<int>(model.channels.size()); c < e; ++c) {
    const ChannelInfo &info = model.channels[c];
    if (!info.signalSteps.empty() ||
        (info.otherEnd >= 0 &&
         !model.channels[info.otherEnd].waitSteps.empty()))
      comparePair(c);
    // Waits whose other end does not exist at all.
    if (info.otherEnd < 0 && !info.waitSteps.empty()) {
      std::string why;
      llvm::raw_string_ostream os(why);
      os << "wait on " << model.channelName(c)
         << " has no matching signal: no channel from rank " << info.dst
         << " to rank " << info.src
         << " of the same kind, protocol and id is declared";
      waits.push_back({{c, 0, waitOp(c, 0), info.dst, info.src}, why});
    }
  }
  report();
  return failure(failedShape || !signals.empty() || !waits.empty());
}

LogicalResult mscl::verify::checkSignalWaitPairing(const ProgramModel &model) {
  return PairingChecker(model).run();
}
