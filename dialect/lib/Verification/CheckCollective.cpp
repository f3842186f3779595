//===- CheckCollective.cpp - mscl-check-collective: postcondition proof ---===//
//
// Symbolic execution over the abstract schedule. Every chunk slot holds a
// multiset of contributions (origin rank, input chunk); input chunk i of
// rank r starts as {(r, i)}, everything else as "uninitialised". A move
// stores into its destination the multiset sum of its sources: one source is
// a copy (put, get, copy), several a reduction (reduce, read_reduce,
// reduce_put, switch_reduce over the group's ranks). Any valid order gives
// the same values once mscl-check-sync proved the program race-free, so the
// order of the abstract schedule is used; a pipeline body stands for every
// iteration (each one does the same to its slice).
//
// At the end, every output chunk of every rank must equal the collective's
// requirement exactly (reduce and gather: the root's; the other ranks'
// output chunks must never have been written); a difference is reported at the operation that last
// wrote the chunk, naming the rank, the chunk and the first missing,
// doubled or foreign contribution.
//
//===----------------------------------------------------------------------===//

#include "GroupedDiagnostics.h"
#include "Contributions.h"
#include "ProgramModel.h"
#include "Schedule.h"

#include "mscl/Verification/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/raw_ostream.h"

#include <cassert>

namespace mscl {
#define GEN_PASS_DEF_CHECKCOLLECTIVE
#include "mscl/Verification/Passes.h.inc"
} // namespace mscl

using namespace mlir;
using namespace mscl;
using namespace mscl::verify;

namespace {

constexpr unsigned kMaxReports = 10;

class CollectiveChecker {
public:
  explicit CollectiveChecker(ProgramOp program)
      : program(program), model(program) {}

  LogicalResult run();

private:
  LogicalResult setUp();
  void execute(const Step &step);
  /// The sorted keys output chunk `j` of rank `r` must hold, once each.
  llvm::SmallVector<uint32_t, 8> expected(int64_t r, int64_t j) const;
  /// Compares one output chunk; returns false after reporting a difference.
  bool checkChunk(int64_t r, int64_t j);
  /// Reports the first of `problems` of output chunk `j` of rank `r` (at
  /// `slot`); returns whether there were none.
  bool report(int64_t r, int64_t j, int64_t slot,
              llvm::ArrayRef<std::string> problems);
  std::string contribution(uint32_t key) const;

  ProgramOp program;
  ProgramModel model;
  CollectiveKind kind = CollectiveKind::custom;
  int64_t ranks = 0, inChunks = 0, outChunks = 0, root = 0;
  bool inplace = false;
  int inBuffer = -1, outBuffer = -1;
  std::vector<Contributions> values;
  std::vector<Operation *> lastWriter;
  unsigned reports = 0, suppressed = 0;

  int64_t inputSlot(int64_t r, int64_t i) const {
    if (inplace && (kind == CollectiveKind::allgather ||
                    kind == CollectiveKind::gather))
      return model.slot(r, inBuffer, r * inChunks + i);
    return model.slot(r, inBuffer, i);
  }
  int64_t outputSlot(int64_t r, int64_t j) const {
    if (inplace && (kind == CollectiveKind::reducescatter ||
                    kind == CollectiveKind::scatter))
      return model.slot(r, outBuffer, r * outChunks + j);
    return model.slot(r, outBuffer, j);
  }
};

} // namespace

static const char *collectiveName(CollectiveKind kind) {
  switch (kind) {
  case CollectiveKind::allreduce:
    return "allreduce";
  case CollectiveKind::allgather:
    return "allgather";
  case CollectiveKind::reducescatter:
    return "reducescatter";
  case CollectiveKind::broadcast:
    return "broadcast";
  case CollectiveKind::alltoall:
    return "alltoall";
  case CollectiveKind::custom:
    return "custom";
  case CollectiveKind::reduce:
    return "reduce";
  case CollectiveKind::gather:
    return "gather";
  case CollectiveKind::scatter:
    return "scatter";
  }
  return "custom";
}

LogicalResult CollectiveChecker::setUp() {
  kind = program.getCollective();
  ranks = model.ranks;
  inChunks = static_cast<int64_t>(program.getInputChunks());
  outChunks = static_cast<int64_t>(program.getOutputChunks());
  root = program.getRootAttr() ? program.getRootAttr().getInt() : 0;
  inplace = program.getInplace();
  const char *name = collectiveName(kind);
  bool shapeOk = true;
  switch (kind) {
  case CollectiveKind::allreduce:
  case CollectiveKind::broadcast:
  case CollectiveKind::reduce:
    shapeOk = inChunks == outChunks;
    break;
  case CollectiveKind::allgather:
  case CollectiveKind::gather:
    shapeOk = outChunks == ranks * inChunks;
    break;
  case CollectiveKind::reducescatter:
  case CollectiveKind::scatter:
    shapeOk = inChunks == ranks * outChunks;
    break;
  case CollectiveKind::alltoall:
    shapeOk = inChunks == outChunks && inChunks % ranks == 0;
    break;
  case CollectiveKind::custom:
    break;
  }
  if (!shapeOk)
    return program.emitError()
           << "cannot state the " << name
           << " postcondition: input_chunks = " << inChunks
           << " and output_chunks = " << outChunks << " do not fit "
           << (name[0] == 'a' ? "an " : "a ") << name
           << " over " << ranks << " ranks";
  if (hasRoot(kind) && (root < 0 || root >= ranks))
    return program.emitError()
           << name << " root " << root << " is outside 0.." << ranks - 1;
  auto find = [&](StringRef buffer) {
    auto it = model.bufferIndex.find(buffer);
    return it == model.bufferIndex.end() ? -1 : it->second;
  };
  if (!inplace) {
    inBuffer = find("input");
    outBuffer = find("output");
  } else {
    // The one declared user buffer is both; its size is the larger view.
    inBuffer = outBuffer = find("output") >= 0 ? find("output") : find("input");
    int64_t want = kind == CollectiveKind::allgather ||
                           kind == CollectiveKind::gather
                       ? outChunks
                       : inChunks;
    if (inBuffer >= 0 && model.buffers[inBuffer].chunks != want)
      return program.emitError()
             << "in-place " << name << ": the user buffer has "
             << model.buffers[inBuffer].chunks << " chunks, expected " << want;
  }
  // The program verifier requires @input or @output (both out of place).
  assert(inBuffer >= 0 && outBuffer >= 0 && "a verified program has them");

  values.assign(model.numSlots(),
                Contributions::single(Contributions::kUninitialised));
  lastWriter.assign(model.numSlots(), nullptr);
  for (int64_t r = 0; r < ranks; ++r)
    for (int64_t i = 0; i < inChunks; ++i)
      values[inputSlot(r, i)] =
          Contributions::single(static_cast<uint32_t>(r * inChunks + i));
  return success();
}

void CollectiveChecker::execute(const Step &step) {
  // Compute every destination before storing any: sources are read first.
  llvm::SmallVector<std::pair<int64_t, Contributions>, 4> results;
  llvm::SmallVector<const Contributions *, 8> parts;
  size_t previous = 0; // first result of the previous move
  for (const Move &move : step.moves) {
    size_t first = results.size();
    for (int64_t j = 0; j < move.dst.count; ++j) {
      int64_t dst = model.slot(move.dst, j);
      if (move.sharesSources && previous + j < first) {
        // Same sources as the previous move: same value, computed once.
        Contributions value = results[previous + j].second;
        results.push_back({dst, std::move(value)});
        continue;
      }
      parts.clear();
      for (const Range &src : move.srcs)
        parts.push_back(&values[model.slot(src, j)]);
      if (parts.empty())
        continue;
      results.push_back({dst, Contributions::sum(parts)});
    }
    previous = first;
  }
  for (auto &[slot, value] : results) {
    values[slot] = std::move(value);
    lastWriter[slot] = step.op;
  }
}

llvm::SmallVector<uint32_t, 8> CollectiveChecker::expected(int64_t r,
                                                           int64_t j) const {
  llvm::SmallVector<uint32_t, 8> keys;
  auto key = [&](int64_t q, int64_t i) {
    keys.push_back(static_cast<uint32_t>(q * inChunks + i));
  };
  // reduce and gather: only the root's output has a requirement (checkChunk).
  switch (kind) {
  case CollectiveKind::allreduce:
  case CollectiveKind::reduce:
    for (int64_t q = 0; q < ranks; ++q)
      key(q, j);
    break;
  case CollectiveKind::allgather:
  case CollectiveKind::gather:
    key(j / inChunks, j % inChunks);
    break;
  case CollectiveKind::scatter:
    key(root, r * outChunks + j);
    break;
  case CollectiveKind::reducescatter:
    for (int64_t q = 0; q < ranks; ++q)
      key(q, r * outChunks + j);
    break;
  case CollectiveKind::broadcast:
    key(root, j);
    break;
  case CollectiveKind::alltoall: {
    int64_t k = inChunks / ranks;
    key(j / k, r * k + j % k);
    break;
  }
  case CollectiveKind::custom:
    break;
  }
  llvm::sort(keys);
  return keys;
}

std::string CollectiveChecker::contribution(uint32_t key) const {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "rank " << key / inChunks << " input chunk " << key % inChunks;
  return text;
}

bool CollectiveChecker::checkChunk(int64_t r, int64_t j) {
  int64_t slot = outputSlot(r, j);
  std::vector<std::string> problems;
  if (resultAtRootOnly(kind) && r != root) {
    // The user may pass no receive buffer here (NCCL's convention); in place
    // it is the rank's input, which is read-only on a non-root rank too.
    if (!lastWriter[slot])
      return true;
    problems.push_back(
        "is written, but only the root's output belongs to the " +
        std::string(collectiveName(kind)) +
        " (other ranks may pass no receive buffer): keep partial results in "
        "scratch");
    return report(r, j, slot, problems);
  }
  const Contributions &actual = values[slot];
  llvm::SmallVector<uint32_t, 8> want = expected(r, j);
  // Walk both sorted sequences; collect the differences.
  auto have = actual.getEntries();
  size_t a = 0, w = 0;
  while (a < have.size() || w < want.size()) {
    if (a < have.size() && have[a].first == Contributions::kUninitialised) {
      if (!lastWriter[slot]) {
        // Everything else follows from that; say only this.
        problems.assign(1, "is never written");
        break;
      }
      problems.push_back(
          "holds uninitialised data (a chunk read before anything wrote it)");
      ++a;
      continue;
    }
    if (w < want.size() && (a >= have.size() || want[w] < have[a].first)) {
      problems.push_back("misses the contribution of " + contribution(want[w]));
      ++w;
      continue;
    }
    if (a < have.size() && (w >= want.size() || have[a].first < want[w])) {
      problems.push_back("holds the contribution of " +
                         contribution(have[a].first) +
                         ", which does not belong there");
      ++a;
      continue;
    }
    // Same key: the count must be one.
    if (have[a].second != 1) {
      uint32_t key = have[a].first;
      std::string text;
      llvm::raw_string_ostream os(text);
      os << "counts rank " << key / inChunks << "'s contribution (input chunk "
         << key % inChunks << ") ";
      if (have[a].second == 2)
        os << "twice";
      else
        os << have[a].second << " times";
      problems.push_back(text);
    }
    ++a;
    ++w;
  }
  return report(r, j, slot, problems);
}

bool CollectiveChecker::report(int64_t r, int64_t j, int64_t slot,
                               llvm::ArrayRef<std::string> problems) {
  if (problems.empty())
    return true;
  if (reports >= kMaxReports) {
    ++suppressed;
    return false;
  }
  ++reports;
  Operation *at = lastWriter[slot] ? lastWriter[slot] : program.getOperation();
  InFlightDiagnostic diag = at->emitError();
  diag << collectiveName(kind) << " postcondition fails: rank " << r
       << " output chunk " << j << " " << problems.front();
  if (problems.size() > 1)
    diag << " (and " << problems.size() - 1 << " more difference"
         << (problems.size() > 2 ? "s" : "") << ")";
  return false;
}

LogicalResult CollectiveChecker::run() {
  if (program.getCollective() == CollectiveKind::custom) {
    program.emitRemark() << "custom collective: no postcondition to prove";
    return success();
  }
  if (failed(setUp()))
    return failure();
  Scheduler scheduler(model);
  bool finished = scheduler.run(
      [&](int block, int step) { execute(model.blocks[block].steps[step]); });
  if (!finished)
    return program.emitError()
           << "cannot prove the " << collectiveName(kind)
           << " postcondition: the program does not run to completion "
              "(mscl-check-sync reports why)";
  bool ok = true;
  for (int64_t r = 0; r < ranks; ++r)
    for (int64_t j = 0; j < outChunks; ++j)
      ok &= checkChunk(r, j);
  if (suppressed)
    program.emitError() << suppressed << " more output chunks are wrong";
  return success(ok);
}

namespace {

struct CheckCollectivePass final
    : mscl::impl::CheckCollectiveBase<CheckCollectivePass> {
  void runOnOperation() override {
    ProgramOp program = getOperation();
    GroupedDiagnostics grouped(program->getContext());
    if (failed(CollectiveChecker(program).run()))
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};

} // namespace
