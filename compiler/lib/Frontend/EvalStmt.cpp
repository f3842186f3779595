//===- EvalStmt.cpp - Statements: lets, loops, blocks, pipelines ----------===//
//
// Statements run in order; `on` and `pipeline` redirect where emitted
// operations go. A Flow value carries `return` out of nested blocks and
// loops, and Stop out of everything once evaluation must end.
//
//===----------------------------------------------------------------------===//

#include "Evaluator.h"

using namespace mscclc;
using namespace mscclc::detail;

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

Evaluator::Flow Evaluator::execBlock(const ast::Block &block) {
  size_t mark = env.size();
  Flow flow = execStmts(block);
  env.resize(mark);
  return flow;
}

Evaluator::Flow Evaluator::execStmts(const ast::Block &block) {
  for (const ast::StmtPtr &stmt : block.stmts) {
    Flow flow = execStmt(*stmt);
    if (flow != Flow::Normal)
      return flow;
  }
  return Flow::Normal;
}

Evaluator::Flow Evaluator::execStmt(const ast::Stmt &stmt) {
  if (!step(stmt.getLoc()) || stopped())
    return Flow::Stop;
  struct Nest {
    unsigned &n;
    ~Nest() { --n; }
  } nest{++nesting};
  if (nesting > kMaxEvalNesting) {
    fatal(stmt.getLoc(), "evaluation nested too deeply (more than " +
                             llvm::Twine(kMaxEvalNesting) + " levels)");
    return Flow::Stop;
  }

  switch (stmt.getKind()) {
  case ast::Stmt::Kind::Let: {
    auto &s = llvm::cast<ast::LetStmt>(stmt);
    Value v = eval(*s.init);
    if (v.kind == Value::Kind::None) {
      error(s.init->getLoc(), "this expression has no value");
      v = Value::poison();
    }
    bind(s.name, v);
    return Flow::Normal;
  }
  case ast::Stmt::Kind::For:
    return execFor(llvm::cast<ast::ForStmt>(stmt));
  case ast::Stmt::Kind::If:
    return execIf(llvm::cast<ast::IfStmt>(stmt));
  case ast::Stmt::Kind::Require: {
    auto &s = llvm::cast<ast::RequireStmt>(stmt);
    std::optional<int64_t> cond = evalInt(*s.cond);
    if (cond && *cond == 0) {
      // The rest of the algorithm assumes what failed here; evaluating on
      // would only produce follow-up errors.
      fatal(s.getLoc(), s.message.empty() ? llvm::Twine("requirement failed")
                                          : "requirement failed: " + s.message);
      return Flow::Stop;
    }
    return Flow::Normal;
  }
  case ast::Stmt::Kind::Scratch:
    execScratch(llvm::cast<ast::ScratchStmt>(stmt));
    return Flow::Normal;
  case ast::Stmt::Kind::On:
    return execOn(llvm::cast<ast::OnStmt>(stmt));
  case ast::Stmt::Kind::Pipeline:
    return execPipeline(llvm::cast<ast::PipelineStmt>(stmt));
  case ast::Stmt::Kind::Expr: {
    const ast::Expr &e = *llvm::cast<ast::ExprStmt>(stmt).expr;
    if (auto *call = llvm::dyn_cast<ast::CallExpr>(&e))
      (void)evalCall(*call, /*asStmt=*/true);
    else if (auto *method = llvm::dyn_cast<ast::MethodCallExpr>(&e))
      evalMethod(*method);
    return stopped() ? Flow::Stop : Flow::Normal;
  }
  case ast::Stmt::Kind::Return: {
    auto &s = llvm::cast<ast::ReturnStmt>(stmt);
    returnValue = s.value ? eval(*s.value) : Value::none();
    return stopped() ? Flow::Stop : Flow::Return;
  }
  }
  return Flow::Normal;
}

Evaluator::Flow Evaluator::execFor(const ast::ForStmt &s) {
  std::optional<int64_t> lo = evalInt(*s.lo);
  std::optional<int64_t> hi = evalInt(*s.hi);
  std::optional<int64_t> stepBy = s.step ? evalInt(*s.step) : 1;
  if (!lo || !hi || !stepBy)
    return stopped() ? Flow::Stop : Flow::Normal;
  if (*stepBy <= 0) {
    error(s.step->getLoc(),
          "the loop step must be positive, got " + llvm::Twine(*stepBy));
    return Flow::Normal;
  }
  for (int64_t i = *lo; i < *hi;) {
    if (!step(s.getLoc()))
      return Flow::Stop;
    size_t mark = env.size();
    bind(s.var, Value::integer(i));
    bool run = true;
    if (s.filter) {
      std::optional<int64_t> keep = evalInt(*s.filter);
      run = keep && *keep != 0;
    }
    Flow flow = run ? execStmts(s.body) : Flow::Normal;
    env.resize(mark);
    if (flow != Flow::Normal)
      return flow;
    if (stopped())
      return Flow::Stop;
    if (i > *hi - *stepBy) // i + step would pass hi (or overflow)
      break;
    i += *stepBy;
  }
  return Flow::Normal;
}

Evaluator::Flow Evaluator::execIf(const ast::IfStmt &s) {
  std::optional<int64_t> cond = evalInt(*s.cond);
  if (!cond)
    return stopped() ? Flow::Stop : Flow::Normal;
  if (*cond)
    return execBlock(s.thenBlock);
  if (s.elseBlock)
    return execBlock(*s.elseBlock);
  return Flow::Normal;
}

void Evaluator::execScratch(const ast::ScratchStmt &s) {
  std::optional<int64_t> size = evalInt(*s.size);
  if (!size)
    return;
  // An empty buffer (say `scratch s[inplace * N]` out of place) cannot be
  // referenced; it is allowed so that such sizes need no special case.
  if (*size < 0 || *size > kMaxBufferChunks) {
    error(s.size->getLoc(), "a scratch buffer needs between 0 and " +
                                llvm::Twine(kMaxBufferChunks) +
                                " chunks, got " + llvm::Twine(*size));
    return;
  }
  if (globals.count(s.name)) {
    error(s.getLoc(), "scratch buffer '" + s.name + "' is already declared");
    return;
  }
  BufferInfo info(s.name, BufferInfo::Kind::Scratch, *size);
  info.scratchIndex = prog.scratch.size();
  buffers.push_back(info);
  prog.scratch.push_back(ScratchBuffer{s.name, *size, false, s.getLoc()});
  Value v;
  v.kind = Value::Kind::Buffer;
  v.buffer = &buffers.back();
  globals[s.name] = v;
}

Evaluator::BlockState *Evaluator::getBlock(int64_t rank, int64_t tb,
                                           int64_t groupSize,
                                           mlir::Location loc) {
  auto &rankBlocks = blocks[rank];
  auto describeBlocks = [](int64_t id, int64_t size) {
    return size == 1
               ? "tb " + std::to_string(id)
               : "tbs " + std::to_string(id) + ".." + std::to_string(id + size);
  };
  // The only candidates for overlap are the nearest group starting at or
  // before `tb`, and groups starting inside tb..tb+groupSize-1.
  auto it = rankBlocks.upper_bound(tb + groupSize - 1);
  if (it != rankBlocks.begin()) {
    --it;
    const ThreadBlock &other = it->second.block;
    bool overlaps = other.id + other.groupSize > tb;
    if (other.id == tb && other.groupSize == groupSize)
      return &it->second;
    if (overlaps) {
      diag.error(loc,
                 describeBlocks(tb, groupSize) + " of rank " +
                     llvm::Twine(rank) + " overlaps " +
                     describeBlocks(other.id, other.groupSize) + " used before",
                 mlir::Location(it->second.firstUse), "first used here");
      return nullptr;
    }
  }
  BlockState &state = rankBlocks[tb];
  state.block.id = tb;
  state.block.groupSize = groupSize;
  state.firstUse = loc;
  return &state;
}

Evaluator::Flow Evaluator::execOn(const ast::OnStmt &s) {
  if (on) {
    error(s.getLoc(), "'on' blocks cannot be nested");
    return Flow::Normal;
  }
  std::optional<int64_t> rank = evalInt(*s.rank);
  std::optional<int64_t> tb = evalInt(*s.tb);
  std::optional<int64_t> tbEnd = s.tbEnd ? evalInt(*s.tbEnd) : std::nullopt;
  if (!rank || !tb || (s.tbEnd && !tbEnd))
    return stopped() ? Flow::Stop : Flow::Normal;
  if (!checkRank(*rank, *s.rank))
    return Flow::Normal;
  int64_t end = s.tbEnd ? *tbEnd : *tb + 1;
  if (*tb < 0 || *tb >= kMaxThreadBlocks) {
    error(s.tb->getLoc(), "thread block " + llvm::Twine(*tb) +
                              " is out of range (0.." +
                              llvm::Twine(kMaxThreadBlocks - 1) + ")");
    return Flow::Normal;
  }
  if (end <= *tb || end > kMaxThreadBlocks) {
    error(s.tbEnd->getLoc(), "thread-block range " + llvm::Twine(*tb) + ".." +
                                 llvm::Twine(end) +
                                 " must be non-empty and end at most at " +
                                 llvm::Twine(kMaxThreadBlocks));
    return Flow::Normal;
  }
  BlockState *state = getBlock(*rank, *tb, end - *tb, s.getLoc());
  if (!state)
    return Flow::Normal;
  on = OnContext{*rank, *tb, &state->block.ops, false};
  Flow flow = execBlock(s.body);
  on.reset();
  return flow;
}

Evaluator::Flow Evaluator::execPipeline(const ast::PipelineStmt &s) {
  if (!on) {
    error(s.getLoc(), "'pipeline' must be inside an 'on' block");
    return Flow::Normal;
  }
  if (on->inPipeline) {
    error(s.getLoc(), "pipelines cannot be nested");
    return Flow::Normal;
  }
  std::optional<int64_t> unit = evalInt(*s.unit);
  if (!unit)
    return stopped() ? Flow::Stop : Flow::Normal;
  if (*unit <= 0) {
    error(s.unit->getLoc(),
          "the pipeline unit must be positive, got " + llvm::Twine(*unit));
    return Flow::Normal;
  }
  std::vector<Operation> body;
  OnContext outer = *on;
  on = OnContext{outer.rank, outer.tb, &body, true};
  Flow flow = execBlock(s.body);
  on = outer;
  if (!body.empty()) {
    Operation op{OpKind::Pipeline, "",        std::nullopt, {}, *unit,
                 std::move(body),  s.getLoc()};
    outer.sink->push_back(std::move(op));
  }
  return flow;
}
