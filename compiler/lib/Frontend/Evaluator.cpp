//===- Evaluator.cpp - Setup and statements of the evaluation -------------===//

#include "Evaluator.h"

#include "mscclc/Frontend/Sema.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/SmallString.h"

using namespace mscclc;
using namespace mscclc::detail;

namespace {
Program emptyProgram(mlir::MLIRContext &ctx) {
  return Program{"",   CollectiveKind::AllReduce, false, 0,  0,
                 0,    1,                         1,     0,  0,
                 {},   {},                        {},    mlir::UnknownLoc::get(&ctx)};
}
} // namespace

Evaluator::Evaluator(const ast::Module &module, const FrontendOptions &opts,
                     DiagReporter &diag)
    : module(module), opts(opts), diag(diag), ctx(diag.getContext()),
      prog(emptyProgram(diag.getContext())) {}

//===----------------------------------------------------------------------===//
// Diagnostics and limits
//===----------------------------------------------------------------------===//

void Evaluator::error(mlir::Location loc, const llvm::Twine &msg) {
  if (!reported.insert(mlir::LocationAttr(loc)).second)
    return;
  if (callSites.empty())
    diag.error(loc, msg);
  else
    diag.error(loc, msg, callSites.back(), "in the call from here");
  if (diag.limitReached())
    stop = true;
}

void Evaluator::fatal(mlir::Location loc, const llvm::Twine &msg) {
  reported.erase(mlir::LocationAttr(loc)); // a limit must be reported even at a seen location
  error(loc, msg);
  stop = true;
}

bool Evaluator::step(mlir::Location loc) {
  if (stop)
    return false;
  if (++steps > kMaxSteps) {
    fatal(loc, "evaluation stopped after " + llvm::Twine(kMaxSteps) +
                   " steps (is a loop or the recursion unbounded?)");
    return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Setup
//===----------------------------------------------------------------------===//

bool Evaluator::checkOptions() {
  mlir::Location unknown = mlir::UnknownLoc::get(&ctx);
  bool ok = true;
  if (opts.ranks < 1 || opts.ranks > kMaxRanks) {
    diag.error(unknown, "--ranks must be between 1 and " +
                            llvm::Twine(kMaxRanks) + ", got " +
                            llvm::Twine(opts.ranks));
    return false;
  }
  ranks = opts.ranks;
  gpusPerNode = opts.gpusPerNode.value_or(ranks);
  if (gpusPerNode < 1 || ranks % gpusPerNode != 0) {
    diag.error(unknown, "--gpus-per-node " + llvm::Twine(gpusPerNode) +
                            " does not divide --ranks " + llvm::Twine(ranks));
    ok = false;
  }
  if (opts.instances < 1 || opts.instances > kMaxThreadBlocks) {
    diag.error(unknown, "--instances must be between 1 and " +
                            llvm::Twine(kMaxThreadBlocks) + ", got " +
                            llvm::Twine(opts.instances));
    ok = false;
  }
  if (!ok)
    return false;
  globals["nranks"] = Value::integer(ranks);
  globals["gpus_per_node"] = Value::integer(gpusPerNode);
  globals["nnodes"] = Value::integer(ranks / gpusPerNode);
  globals["instances"] = Value::integer(opts.instances);
  return true;
}

bool Evaluator::evalParams() {
  llvm::StringMap<int64_t> defines;
  for (const auto &[name, value] : opts.defines)
    defines[name] = value;
  llvm::StringMap<const ast::ParamDecl *> params;
  for (const auto &file : module.files)
    for (const ast::DeclPtr &decl : file->decls)
      if (auto *p = llvm::dyn_cast<ast::ParamDecl>(decl.get()))
        params[p->name] = p;
  bool ok = true;
  for (const auto &[name, value] : opts.defines) {
    if (!params.count(name)) {
      diag.error(mlir::UnknownLoc::get(&ctx),
                 "-D names unknown parameter '" + name + "'");
      ok = false;
    }
  }
  if (!ok)
    return false;
  unsigned before = diag.errorCount();
  for (const auto &file : module.files) {
    for (const ast::DeclPtr &decl : file->decls) {
      auto *p = llvm::dyn_cast<ast::ParamDecl>(decl.get());
      if (!p)
        continue;
      auto it = defines.find(p->name);
      if (it != defines.end()) {
        globals[p->name] = Value::integer(it->second);
        continue;
      }
      std::optional<int64_t> v = evalInt(*p->value);
      globals[p->name] = v ? Value::integer(*v) : Value::poison();
    }
  }
  return diag.errorCount() == before && !stop;
}

bool Evaluator::evalHeader(const ast::AlgorithmDecl &algo) {
  prog.name = algo.name;
  prog.loc = algo.getLoc();
  collective = llvm::StringSwitch<CollectiveKind>(algo.collective)
                   .Case("allreduce", CollectiveKind::AllReduce)
                   .Case("allgather", CollectiveKind::AllGather)
                   .Case("reducescatter", CollectiveKind::ReduceScatter)
                   .Case("broadcast", CollectiveKind::Broadcast)
                   .Case("alltoall", CollectiveKind::AllToAll)
                   .Default(CollectiveKind::Custom);
  int64_t root = 0, customIn = 0, customOut = 0;
  bool ok = true;
  for (const ast::AlgorithmOption &opt : algo.options) {
    if (opt.name == "inplace") {
      inPlace = true;
      continue;
    }
    std::optional<int64_t> v = evalInt(*opt.value);
    if (!v) {
      ok = false;
      continue;
    }
    auto inRange = [&](int64_t lo, int64_t hi, llvm::StringRef what) {
      if (*v >= lo && *v <= hi)
        return true;
      error(opt.value->getLoc(), "'" + opt.name + "' must be " + what +
                                     ", got " + llvm::Twine(*v));
      ok = false;
      return false;
    };
    if (opt.name == "chunks" &&
        inRange(1, kMaxBufferChunks / ranks,
                "between 1 and " + std::to_string(kMaxBufferChunks / ranks)))
      chunks = *v;
    else if (opt.name == "root" &&
             inRange(0, ranks - 1,
                     "a rank between 0 and " + std::to_string(ranks - 1)))
      root = *v;
    else if (opt.name == "input" &&
             inRange(1, kMaxBufferChunks,
                     "between 1 and " + std::to_string(kMaxBufferChunks)))
      customIn = *v;
    else if (opt.name == "output" &&
             inRange(1, kMaxBufferChunks,
                     "between 1 and " + std::to_string(kMaxBufferChunks)))
      customOut = *v;
  }
  if (!ok)
    return false;

  int64_t n = ranks, k = chunks;
  int64_t in = k, out = k;
  switch (collective) {
  case CollectiveKind::AllReduce:
  case CollectiveKind::Broadcast:
    break;
  case CollectiveKind::AllGather:
    out = n * k;
    break;
  case CollectiveKind::ReduceScatter:
    in = n * k;
    break;
  case CollectiveKind::AllToAll:
    in = out = n * k;
    break;
  case CollectiveKind::Custom:
    in = customIn;
    out = customOut;
    break;
  }
  prog.collective = collective;
  prog.inPlace = inPlace;
  prog.root = root;
  prog.ranks = ranks;
  prog.gpusPerNode = gpusPerNode;
  prog.instances = opts.instances;
  prog.chunks = k;
  prog.inputChunks = in;
  prog.outputChunks = out;

  buffers.emplace_back("input", BufferInfo::Kind::Input, in);
  buffers.emplace_back("output", BufferInfo::Kind::Output, out);
  Value input, output;
  input.kind = output.kind = Value::Kind::Buffer;
  input.buffer = &buffers[0];
  output.buffer = &buffers[1];
  globals["input"] = input;
  globals["output"] = output;
  return true;
}

std::optional<Program> Evaluator::run() {
  if (!checkOptions())
    return std::nullopt;
  for (const auto &file : module.files)
    for (const ast::DeclPtr &decl : file->decls)
      if (auto *fn = llvm::dyn_cast<ast::FnDecl>(decl.get()))
        fns[fn->name] = fn;
  if (!evalParams())
    return std::nullopt;
  const ast::AlgorithmDecl *algo = findAlgorithm(module);
  if (!algo || !evalHeader(*algo))
    return std::nullopt;
  blocks.resize(ranks);
  unsigned before = diag.errorCount();
  execBlock(algo->body);
  if (!stop)
    for (const auto &rankBlocks : blocks)
      for (const auto &[id, state] : rankBlocks)
        checkPacketReads(state.block.ops);
  if (diag.errorCount() != before || stop)
    return std::nullopt;
  return finish();
}

Program Evaluator::finish() {
  for (int64_t r = 0; r < ranks; ++r) {
    RankProgram rp;
    rp.rank = r;
    for (auto &[id, state] : blocks[r])
      rp.threadBlocks.push_back(std::move(state.block));
    prog.rankPrograms.push_back(std::move(rp));
  }
  return std::move(prog);
}

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
      fatal(s.getLoc(), s.message.empty()
                            ? llvm::Twine("requirement failed")
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
  if (*size < 1 || *size > kMaxBufferChunks) {
    error(s.size->getLoc(), "a scratch buffer needs between 1 and " +
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
    return size == 1 ? "tb " + std::to_string(id)
                     : "tbs " + std::to_string(id) + ".." +
                           std::to_string(id + size);
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
                     describeBlocks(other.id, other.groupSize) +
                     " used before",
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
    Operation op{OpKind::Pipeline, "", std::nullopt, {}, *unit, std::move(body),
                 s.getLoc()};
    outer.sink->push_back(std::move(op));
  }
  return flow;
}
