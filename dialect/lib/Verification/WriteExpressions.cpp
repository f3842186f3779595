//===- WriteExpressions.cpp - The proof's expressions as JSON -------------===//

#include "mscl/Verification/Expressions.h"

#include "Evaluation.h"
#include "UserChunks.h"

#include "llvm/Support/JSON.h"

#include <map>
#include <memory>

using namespace mlir;
using namespace mscl;
using namespace mscl::verify;

LogicalResult mscl::writeExpressions(ProgramOp program, raw_ostream &os) {
  ProgramModel model(program);
  FailureOr<UserChunks> user = UserChunks::get(program, model);
  if (failed(user))
    return failure();
  ExprPool pool;
  Evaluation evaluation(model, pool, user->inputs(model));
  if (!evaluation.run())
    return program.emitError() << "cannot write the expressions: the program "
                                  "does not run to completion";
  // The nodes the outputs reach, operands before the nodes using them
  // (ids grow with creation), numbered densely.
  llvm::DenseMap<ExprId, int64_t> number;
  std::vector<ExprId> order;
  std::vector<ExprId> stack;
  for (int64_t r = 0; r < user->ranks; ++r)
    for (int64_t j = 0; j < user->outChunks; ++j)
      stack.push_back(evaluation.expr(user->outputSlot(model, r, j)));
  llvm::DenseSet<ExprId> seen;
  while (!stack.empty()) {
    ExprId id = stack.back();
    stack.pop_back();
    if (!seen.insert(id).second)
      continue;
    order.push_back(id);
    if (pool.kind(id) == ExprPool::Kind::Apply) {
      stack.push_back(pool.operands(id).first);
      stack.push_back(pool.operands(id).second);
    } else if (pool.kind(id) == ExprPool::Kind::Switch) {
      for (ExprId child : pool.children(id))
        stack.push_back(child);
    }
  }
  llvm::sort(order);
  llvm::json::Array nodes;
  for (ExprId id : order) {
    number[id] = static_cast<int64_t>(nodes.size());
    switch (pool.kind(id)) {
    case ExprPool::Kind::Uninitialised:
      nodes.push_back(llvm::json::Array{"uninitialised"});
      break;
    case ExprPool::Kind::Leaf:
      nodes.push_back(llvm::json::Array{"input", pool.leafOf(id).first,
                                        pool.leafOf(id).second});
      break;
    case ExprPool::Kind::Apply:
      nodes.push_back(llvm::json::Array{"op", number[pool.operands(id).first],
                                        number[pool.operands(id).second]});
      break;
    case ExprPool::Kind::Switch: {
      llvm::json::Array children;
      for (ExprId child : pool.children(id))
        children.push_back(number[child]);
      nodes.push_back(llvm::json::Array{"switch", std::move(children)});
      break;
    }
    }
  }
  // A residue whose last elements may differ is evaluated on its own (the
  // sets are exact but for a value written back after another).
  std::map<int64_t, std::unique_ptr<Evaluation>> atResidue;
  auto lastAt = [&](int64_t residue, int64_t slot) {
    std::unique_ptr<Evaluation> &entry = atResidue[residue];
    if (!entry) {
      entry = std::make_unique<Evaluation>(model, pool, user->inputs(model),
                                           residue);
      entry->run();
    }
    return entry->expr(slot);
  };
  llvm::json::Array outputs;
  for (int64_t r = 0; r < user->ranks; ++r)
    for (int64_t j = 0; j < user->outChunks; ++j) {
      int64_t slot = user->outputSlot(model, r, j);
      const ExprId value = evaluation.expr(slot);
      llvm::json::Array wrong;
      Residues bad = evaluation.lastMissing(slot);
      for (int64_t q = 0; q < model.chunks; ++q)
        if (bad.test(q) && lastAt(q, slot) != value)
          wrong.push_back(q);
      outputs.push_back(llvm::json::Object{
          {"rank", r},
          {"chunk", j},
          {"expr", number[value]},
          {"lastElementDiffers", std::move(wrong)}});
    }
  llvm::json::Object doc{
      {"format", "mscclc-exprs"},
      {"version", 1},
      {"name", program.getSymName()},
      {"collective", stringifyCollectiveKind(user->kind)},
      {"ranks", user->ranks},
      {"chunks", model.chunks},
      {"inputChunks", user->inChunks},
      {"outputChunks", user->outChunks},
      {"inPlace", user->inplace},
      {"nodes", std::move(nodes)},
      {"outputs", std::move(outputs)}};
  os << llvm::json::Value(std::move(doc)) << "\n";
  return success();
}
