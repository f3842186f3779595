//===- CheckCollective.cpp - mscl-check-collective: postcondition proof ---===//
//
// Symbolic execution over the abstract schedule (Evaluation.h): every chunk
// slot holds the multiset of contributions (origin rank, input chunk)
// combined into it, the expression that combines them, and the residues of
// the count at which its last element holds the same. At the end:
//  - every output chunk of every rank must hold exactly the collective's
//    requirement (reduce and gather: the root's; the other ranks' output
//    chunks must never have been written), in its body and, at every
//    count, in its last element;
//  - outputs the collective defines equal on every rank (all-reduce,
//    all-gather, broadcast) must be the same expression on every rank, so
//    that every rank gets the same bits.
// A difference is reported at the operation that last wrote the chunk,
// naming the rank, the chunk, the count and the first missing, doubled or
// foreign contribution, or the two orders of summation.
//
//===----------------------------------------------------------------------===//

#include "GroupedDiagnostics.h"
#include "Contributions.h"
#include "Evaluation.h"
#include "ProgramModel.h"
#include "Schedule.h"
#include "UserChunks.h"

#include "mscl/Verification/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/raw_ostream.h"

#include <cassert>
#include <map>
#include <memory>

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
  CollectiveChecker(ProgramOp program, const ProgramModel &model)
      : program(program), model(model) {}

  LogicalResult run();

private:
  LogicalResult setUp();
  /// The sorted keys output chunk `j` of rank `r` must hold, once each.
  llvm::SmallVector<uint32_t, 8> expected(int64_t r, int64_t j) const;
  /// How `actual` differs from what output chunk `j` of rank `r` must
  /// hold; `written`: whether anything wrote it.
  std::vector<std::string> differences(int64_t r, int64_t j,
                                       const Contributions &actual,
                                       bool written) const;
  /// Compares one output chunk, body and last element; returns false
  /// after reporting a difference.
  bool checkChunk(int64_t r, int64_t j);
  /// The last element of output chunk `j` of rank `r`, at every count.
  bool checkLastElement(int64_t r, int64_t j);
  /// Outputs that are equal on every rank hold the same expression.
  bool checkSameBits();
  /// Reports the first of `problems` at `at` (the program when null);
  /// `count` prefixes the count it shows at. Returns whether there were
  /// none.
  bool report(Operation *at, int64_t r, int64_t j,
              llvm::ArrayRef<std::string> problems,
              llvm::StringRef count = "");
  std::string contribution(uint32_t key) const;
  /// The contributions an expression combines, with multiplicity (many
  /// output chunks hold one expression: computed once each).
  const Contributions &contributionsOf(ExprId expr) {
    auto [it, fresh] = contributionCache.try_emplace(expr);
    if (fresh)
      it->second =
          Contributions::fromEntries(pool.contributions(expr, inChunks));
    return it->second;
  }
  /// The evaluation of every slot's last element at `residue`.
  const Evaluation &atResidue(int64_t residue);

  ProgramOp program;
  const ProgramModel &model;
  ExprPool pool;
  std::unique_ptr<Evaluation> evaluation;
  std::map<int64_t, std::unique_ptr<Evaluation>> residueEvaluations;
  llvm::DenseMap<ExprId, Contributions> contributionCache;
  std::vector<InputChunk> inputs;
  UserChunks user;
  CollectiveKind kind = CollectiveKind::custom;
  int64_t ranks = 0, inChunks = 0, outChunks = 0, root = 0;
  unsigned reports = 0, suppressed = 0;

  int64_t outputSlot(int64_t r, int64_t j) const {
    return user.outputSlot(model, r, j);
  }
};

} // namespace

static StringRef collectiveName(CollectiveKind kind) {
  return stringifyCollectiveKind(kind);
}

LogicalResult CollectiveChecker::setUp() {
  FailureOr<UserChunks> shape = UserChunks::get(program, model);
  if (failed(shape))
    return failure();
  user = *shape;
  kind = user.kind;
  ranks = user.ranks;
  inChunks = user.inChunks;
  outChunks = user.outChunks;
  root = user.root;
  inputs = user.inputs(model);
  return success();
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

std::vector<std::string>
CollectiveChecker::differences(int64_t r, int64_t j,
                               const Contributions &actual,
                               bool written) const {
  std::vector<std::string> problems;
  llvm::SmallVector<uint32_t, 8> want = expected(r, j);
  // Walk both sorted sequences; collect the differences.
  auto have = actual.getEntries();
  size_t a = 0, w = 0;
  while (a < have.size() || w < want.size()) {
    if (a < have.size() && have[a].first == Contributions::kUninitialised) {
      if (!written) {
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
  return problems;
}

bool CollectiveChecker::checkChunk(int64_t r, int64_t j) {
  int64_t slot = outputSlot(r, j);
  Operation *writer = evaluation->lastWriter(slot);
  if (resultAtRootOnly(kind) && r != root) {
    // The user may pass no receive buffer here (NCCL's convention); in place
    // it is the rank's input, which is read-only on a non-root rank too.
    if (!writer)
      return true;
    return report(writer, r, j,
                  {"is written, but only the root's output belongs to the " +
                   collectiveName(kind).str() +
                   " (other ranks may pass no receive buffer): keep partial "
                   "results in scratch"});
  }
  if (!report(writer, r, j,
              differences(r, j, contributionsOf(evaluation->expr(slot)),
                          writer != nullptr)))
    return false;
  return checkLastElement(r, j);
}

const Evaluation &CollectiveChecker::atResidue(int64_t residue) {
  std::unique_ptr<Evaluation> &entry = residueEvaluations[residue];
  if (!entry) {
    entry = std::make_unique<Evaluation>(model, pool, inputs, residue);
    entry->run();
  }
  return *entry;
}

bool CollectiveChecker::checkLastElement(int64_t r, int64_t j) {
  int64_t slot = outputSlot(r, j);
  const ExprId body = evaluation->expr(slot);
  // The residues where the last element may hold something else: the
  // sets are exact but for a value written back after another, so each is
  // evaluated on its own (usually the first fails).
  Residues wrong = evaluation->lastMissing(slot);
  for (int64_t residue = 0; residue < model.layout.chunks(); ++residue) {
    if (!wrong.test(residue))
      continue;
    const Evaluation &at = atResidue(residue);
    const ExprId last = at.expr(slot);
    if (last == body)
      continue;
    Operation *writer = at.lastWriter(slot);
    std::vector<std::string> problems =
        differences(r, j, contributionsOf(last), writer != nullptr);
    if (problems.empty())
      problems.push_back("is computed as " + pool.str(last) +
                         " while the rest of the chunk is " +
                         pool.str(body) +
                         ", in another order (so its bits may differ)");
    int64_t k = model.layout.chunks();
    std::string when;
    llvm::raw_string_ostream os(when);
    os << "at count " << model.layout.smallestCount(residue);
    if (k > 1)
      os << " (and every count q*" << k << " + " << residue << ")";
    os << ", the last element of";
    return report(writer ? writer : evaluation->lastWriter(slot), r, j,
                  problems, when);
  }
  return true;
}

bool CollectiveChecker::checkSameBits() {
  if (kind != CollectiveKind::allreduce && kind != CollectiveKind::allgather &&
      kind != CollectiveKind::broadcast)
    return true;
  bool ok = true;
  for (int64_t j = 0; j < outChunks; ++j) {
    ExprId first = evaluation->expr(outputSlot(0, j));
    for (int64_t r = 1; r < ranks; ++r) {
      int64_t slot = outputSlot(r, j);
      ExprId expr = evaluation->expr(slot);
      if (expr == first)
        continue;
      ok = report(evaluation->lastWriter(slot), r, j,
                  {"is " + pool.str(expr) + ", but rank 0's is " +
                   pool.str(first) +
                   ": the ranks reduce in different orders, so their bits "
                   "may differ (+ is the reduction operator, applied left to "
                   "right in the element type); reduce the sources in the "
                   "same order on every rank"}) &&
           ok;
      break;
    }
  }
  return ok;
}

std::string CollectiveChecker::contribution(uint32_t key) const {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "rank " << key / inChunks << " input chunk " << key % inChunks;
  return text;
}

bool CollectiveChecker::report(Operation *at, int64_t r, int64_t j,
                               llvm::ArrayRef<std::string> problems,
                               llvm::StringRef count) {
  if (problems.empty())
    return true;
  if (reports >= kMaxReports) {
    ++suppressed;
    return false;
  }
  ++reports;
  InFlightDiagnostic diag =
      (at ? at : program.getOperation())->emitError();
  diag << collectiveName(kind) << " postcondition fails: ";
  if (!count.empty())
    diag << count << " ";
  diag << "rank " << r << " output chunk " << j << " " << problems.front();
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
  evaluation = std::make_unique<Evaluation>(model, pool, inputs);
  if (!evaluation->run())
    return program.emitError()
           << "cannot prove the " << collectiveName(kind)
           << " postcondition: the program does not run to completion "
              "(mscl-check-sync reports why)";
  bool ok = true;
  for (int64_t r = 0; r < ranks; ++r)
    for (int64_t j = 0; j < outChunks; ++j)
      ok &= checkChunk(r, j);
  if (ok)
    ok = checkSameBits();
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
    if (failed(CollectiveChecker(program,
                                 getAnalysis<ProgramModelAnalysis>().model)
                   .run()))
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};

} // namespace
