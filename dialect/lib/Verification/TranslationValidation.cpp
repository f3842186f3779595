//===- TranslationValidation.cpp - Passes keep what programs compute ------===//
//
// Each program's state: the expressions its output chunks held before the
// first pass (the reference), and a fingerprint of its data movement (every
// data action of every thread block, in order), so that only a pass that
// changed data movement is followed by an evaluation: barrier, sync and
// verification passes cost one walk of the program.
//
//===----------------------------------------------------------------------===//

#include "mscl/Verification/TranslationValidation.h"

#include "Evaluation.h"
#include "UserChunks.h"

#include "mscl/IR/MsclSemantics.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/Hashing.h"

#include <mutex>

using namespace mlir;
using namespace mscl;
using namespace mscl::verify;

namespace {

/// What a program computes: per rank and output chunk, the expression and
/// the residues at which the chunk's last element does not hold it.
struct Snapshot {
  int64_t chunks = 1, outChunks = 0, ranks = 0;
  std::vector<ExprId> exprs;
  /// Where the last element misses the expression, for the chunks where it
  /// does at some residue (most have none: a map keeps them cheap).
  llvm::DenseMap<size_t, Residues> lastMissing;
  /// The operation that last wrote each output chunk (null: none).
  std::vector<Operation *> writers;
  size_t at(int64_t r, int64_t j) const { return r * outChunks + j; }
  /// Where chunk `at` misses its expression; null where it never does.
  const Residues *missing(size_t at) const {
    auto it = lastMissing.find(at);
    return it == lastMissing.end() ? nullptr : &it->second;
  }
};

/// Every data action of every thread block, in order, hashed.
llvm::hash_code fingerprint(ProgramOp program) {
  llvm::hash_code hash = llvm::hash_value(program.getChunks());
  program.walk([&](Operation *op) {
    if (auto tb = dyn_cast<ThreadBlockOp>(op)) {
      hash = llvm::hash_combine(hash, tb->getParentOp(), tb.getId());
      return;
    }
    for (const Action &action : getActions(op)) {
      if (!action.isData())
        continue;
      hash = llvm::hash_combine(hash, static_cast<int>(action.kind));
      for (llvm::ArrayRef<ActionOperand> list :
           {llvm::ArrayRef<ActionOperand>(action.reads),
            llvm::ArrayRef<ActionOperand>(action.writes)})
        for (const ActionOperand &o : list)
          hash = llvm::hash_combine(hash, o.chunk.getAsOpaquePointer(),
                                    static_cast<int>(o.reach),
                                    o.via.getAsOpaquePointer());
      hash = llvm::hash_combine(hash, action.writes.size());
    }
  });
  return hash;
}

/// Evaluates `program`; nothing when it cannot be (a shape the proofs
/// report, or a program that does not run to completion).
std::optional<Snapshot> evaluate(ProgramOp program, ExprPool &pool) {
  ProgramModel model(program);
  FailureOr<UserChunks> user = UserChunks::get(program, model,
                                               /*report=*/false);
  if (failed(user))
    return std::nullopt;
  Evaluation evaluation(model, pool, user->inputs(model));
  if (!evaluation.run())
    return std::nullopt;
  Snapshot s;
  s.chunks = model.chunks;
  s.outChunks = user->outChunks;
  s.ranks = model.ranks;
  s.exprs.reserve(size_t(s.ranks * s.outChunks));
  s.writers.reserve(size_t(s.ranks * s.outChunks));
  for (int64_t r = 0; r < s.ranks; ++r)
    for (int64_t j = 0; j < s.outChunks; ++j) {
      s.exprs.push_back(evaluation.expr(user->outputSlot(model, r, j)));
      Residues missing = evaluation.lastMissing(user->outputSlot(model, r, j));
      if (!missing.empty())
        s.lastMissing[s.at(r, j)] = std::move(missing);
      s.writers.push_back(evaluation.lastWriter(user->outputSlot(model, r, j)));
    }
  return s;
}

} // namespace

/// `file:line:col` of the first file location in `loc`.
std::string where(Location loc) {
  std::string text = "<unknown>";
  loc->walk([&](Location inner) {
    if (auto file = dyn_cast<FileLineColLoc>(inner)) {
      text = (file.getFilename().str() + ":" + std::to_string(file.getLine()) +
              ":" + std::to_string(file.getColumn()));
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return text;
}

struct TranslationValidation::State {
  struct Program {
    ExprPool pool;
    std::optional<Snapshot> reference;
    llvm::hash_code fingerprint = 0;
    bool failed = false;
  };
  std::mutex mutex;
  llvm::DenseMap<Operation *, std::unique_ptr<Program>> programs;
  std::vector<std::string> errors;

  Program *lookup(Operation *op, bool create) {
    std::lock_guard<std::mutex> lock(mutex);
    std::unique_ptr<Program> &entry = programs[op];
    if (!entry && create)
      entry = std::make_unique<Program>();
    return entry.get();
  }
};

class TranslationValidation::Instrumentation final : public PassInstrumentation {
public:
  Instrumentation(TranslationValidation &owner) : owner(owner) {}

  void runBeforePass(Pass *, Operation *op) override {
    auto program = dyn_cast<ProgramOp>(op);
    if (!program || owner.state->lookup(op, /*create=*/false))
      return;
    State::Program *state = owner.state->lookup(op, /*create=*/true);
    state->fingerprint = fingerprint(program);
    state->reference = evaluate(program, state->pool);
  }

  void runAfterPass(Pass *pass, Operation *op) override {
    auto program = dyn_cast<ProgramOp>(op);
    if (!program)
      return;
    State::Program *state = owner.state->lookup(op, /*create=*/false);
    if (!state || !state->reference || state->failed)
      return;
    llvm::hash_code now = fingerprint(program);
    if (now == state->fingerprint)
      return;
    state->fingerprint = now;
    std::optional<Snapshot> after = evaluate(program, state->pool);
    if (!after)
      return; // the proofs report why it does not run
    if (!compare(*state, *after, program, pass->getArgument()))
      ++owner.failures;
  }

private:
  /// Reports the first output chunk whose expression `pass` changed.
  bool compare(State::Program &state, const Snapshot &after,
               ProgramOp program, StringRef pass) {
    const Snapshot &before = *state.reference;
    auto fail = [&](int64_t r, int64_t j, const std::string &what) {
      state.failed = true;
      Operation *at = r < after.ranks && j < after.outChunks
                          ? after.writers[after.at(r, j)]
                          : nullptr;
      std::string text;
      llvm::raw_string_ostream os(text);
      os << where((at ? at : program.getOperation())->getLoc())
         << ": error: internal error: translation validation fails after "
         << pass << " on @" << program.getSymName() << ": rank " << r
         << " output chunk " << j << " " << what
         << " (the pass changed what the program computes: a bug of the "
            "compiler)";
      std::lock_guard<std::mutex> lock(owner.state->mutex);
      owner.state->errors.push_back(std::move(text));
      return false;
    };
    if (after.ranks != before.ranks || after.chunks % before.chunks != 0 ||
        after.outChunks * before.chunks != before.outChunks * after.chunks)
      return fail(0, 0, "has another layout than before the passes");
    // Replication: user chunk j became j * instances + i.
    int64_t instances = after.chunks / before.chunks;
    std::vector<llvm::DenseMap<ExprId, ExprId>> memo(instances);
    for (int64_t r = 0; r < after.ranks; ++r)
      for (int64_t j = 0; j < after.outChunks; ++j) {
        int64_t j0 = j / instances, i = j % instances;
        ExprId want = before.exprs[before.at(r, j0)];
        if (instances > 1)
          want = state.pool.renumberChunks(want, instances, i, memo[i]);
        ExprId have = after.exprs[after.at(r, j)];
        if (have != want)
          return fail(r, j,
                      "is computed as " + state.pool.str(have) +
                          ", but before the passes as " +
                          state.pool.str(want));
        // The counts at which the last element holds the same: comparable
        // while the chunk layout is the same.
        const Residues *now = after.missing(after.at(r, j));
        const Residues *then = before.missing(before.at(r, j));
        if (instances == 1 && (now && then ? *now != *then : now != then))
          return fail(r, j,
                      "has its last element computed at other counts than "
                      "before the passes");
      }
    return true;
  }

  TranslationValidation &owner;
};

TranslationValidation::TranslationValidation()
    : state(std::make_unique<State>()) {}

TranslationValidation::~TranslationValidation() = default;

void TranslationValidation::printErrors(llvm::raw_ostream &os) const {
  std::lock_guard<std::mutex> lock(state->mutex);
  for (const std::string &error : state->errors)
    os << error << "\n";
}

std::unique_ptr<PassInstrumentation> TranslationValidation::instrumentation() {
  return std::make_unique<Instrumentation>(*this);
}
