//===- Sema.cpp - Static checks on a parsed module ------------------------===//
//
// Scoping: built-in values and parameters are global; parameters see the
// ones declared before them. Scratch buffers are declared at the top level
// of the algorithm and are visible after their declaration and in every
// function. Functions live in their own namespace and may be called before
// they are defined. A `let` (or loop variable, or function parameter) may
// shadow an outer `let`, but not a global name, so `input` or `nranks`
// always mean what the reader expects.
//
//===----------------------------------------------------------------------===//

#include "mscclc/Frontend/Sema.h"

#include "Builtins.h"
#include "mscclc/floor/Tables.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringMap.h"

using namespace mscclc;
using namespace mscclc::ast;

namespace {

class Sema {
public:
  Sema(const Module &m, DiagReporter &diag) : m(m), diag(diag) {}
  bool run();

private:
  /// Where a name was declared; a null loc means built in.
  struct Entry {
    Loc loc;
    enum class What { Value, Param, Buffer, Local } what;
  };

  void collectFunctions();
  void checkParams();
  const AlgorithmDecl *checkAlgorithmDecls();
  void checkOptions(const AlgorithmDecl &algo);
  void checkFn(const FnDecl &fn);

  void checkBlock(const Block &block);
  void checkStmts(const Block &block);
  void checkStmt(const Stmt &stmt);
  /// `asStmt`: the expression is a whole statement, so operations (which
  /// have no value) are allowed.
  void checkExpr(const Expr &expr, bool asStmt = false);
  void checkArgs(const std::vector<ExprPtr> &args, bool exceptAllowed,
                 bool rangeFirst);
  void checkCall(const CallExpr &call, bool asStmt);
  void checkMethod(const MethodCallExpr &call, bool asStmt);
  bool checkArity(Loc loc, llvm::StringRef what, Arity a, size_t n);

  /// Declares a local name in the innermost scope.
  void declareLocal(llvm::StringRef name, Loc loc);
  /// Declares a global name (parameter or scratch buffer).
  void declareGlobal(llvm::StringRef name, Loc loc, Entry::What what);
  const Entry *lookup(llvm::StringRef name) const;

  const Module &m;
  DiagReporter &diag;
  llvm::StringMap<Entry> globals;
  llvm::StringMap<const FnDecl *> fns;
  /// Scratch names of the algorithm, visible in function bodies.
  llvm::StringMap<Loc> algorithmScratch;
  std::vector<llvm::StringMap<Loc>> scopes;
  bool inFn = false;
  unsigned onDepth = 0;       // statically enclosing `on` blocks
  unsigned pipelineDepth = 0; // statically enclosing pipelines
};

} // namespace

//===----------------------------------------------------------------------===//
// Declarations
//===----------------------------------------------------------------------===//

bool Sema::run() {
  unsigned before = diag.errorCount();
  for (llvm::StringRef name : kBuiltinValues)
    globals[name] = {Loc(), Entry::What::Value};
  for (llvm::StringRef name : kBuiltinBuffers)
    globals[name] = {Loc(), Entry::What::Buffer};

  collectFunctions();
  checkParams();
  const AlgorithmDecl *algo = checkAlgorithmDecls();
  if (algo) {
    checkOptions(*algo);
    for (const StmtPtr &stmt : algo->body.stmts)
      if (auto *s = llvm::dyn_cast<ScratchStmt>(stmt.get()))
        algorithmScratch.try_emplace(s->name, s->getLoc());
    scopes.emplace_back();
    checkStmts(algo->body);
    scopes.clear();
  }
  for (const auto &file : m.files)
    for (const DeclPtr &decl : file->decls)
      if (auto *fn = llvm::dyn_cast<FnDecl>(decl.get()))
        checkFn(*fn);
  return diag.errorCount() == before;
}

void Sema::collectFunctions() {
  for (const auto &file : m.files) {
    for (const DeclPtr &decl : file->decls) {
      auto *fn = llvm::dyn_cast<FnDecl>(decl.get());
      if (!fn)
        continue;
      if (lookupBuiltinFn(fn->name)) {
        diag.error(fn->getLoc(), "'" + fn->name +
                                     "' is a built-in function and cannot be "
                                     "redefined");
        continue;
      }
      auto [it, inserted] = fns.try_emplace(fn->name, fn);
      if (!inserted)
        diag.error(fn->getLoc(), "redefinition of function '" + fn->name + "'",
                   it->second->getLoc(), "previous definition is here");
    }
  }
}

void Sema::checkParams() {
  for (const auto &file : m.files) {
    for (const DeclPtr &decl : file->decls) {
      auto *param = llvm::dyn_cast<ParamDecl>(decl.get());
      if (!param)
        continue;
      checkExpr(*param->value);
      declareGlobal(param->name, param->getLoc(), Entry::What::Param);
    }
  }
}

const AlgorithmDecl *Sema::checkAlgorithmDecls() {
  const AlgorithmDecl *first = nullptr;
  for (const DeclPtr &decl : m.getMainFile().decls) {
    auto *algo = llvm::dyn_cast<AlgorithmDecl>(decl.get());
    if (!algo)
      continue;
    if (first) {
      diag.error(algo->getLoc(),
                 "a file holds one algorithm; '" + first->name +
                     "' is already defined",
                 first->getLoc(), "the first algorithm is here");
      continue;
    }
    first = algo;
  }
  if (!first) {
    mlir::StringAttr file =
        mlir::StringAttr::get(&diag.getContext(), m.getMainFile().path);
    diag.error(mlir::FileLineColLoc::get(file, 1, 1),
               "no 'algorithm' in '" + m.getMainFile().path + "'");
  }
  return first;
}

void Sema::checkOptions(const AlgorithmDecl &algo) {
  llvm::StringRef c = algo.collective;
  if (!lookupCollective(c)) {
    std::string expected;
    for (int i = 0; i < kNumCollectives; ++i)
      expected += std::string(i == 0                   ? ""
                              : i + 1 == kNumCollectives ? " or "
                                                         : ", ") +
                  kCollectives[i].name;
    diag.error(algo.collectiveLoc, "unknown collective '" + c +
                                       "' (expected " + expected + ")");
    return;
  }
  llvm::StringMap<Loc> seen;
  for (const AlgorithmOption &opt : algo.options) {
    auto [it, inserted] = seen.try_emplace(opt.name, opt.loc);
    if (!inserted) {
      diag.error(opt.loc, "option '" + opt.name + "' given twice", it->second,
                 "first given here");
      continue;
    }
    bool isFlag = opt.name == "inplace";
    Collective coll = *lookupCollective(c);
    bool allowed =
        opt.name == "chunks" ||
        (opt.name == "inplace" &&
         collectiveInfo(coll).inPlace != InPlace::Never) ||
        (opt.name == "root" && collectiveRooted(coll)) ||
        ((opt.name == "input" || opt.name == "output") &&
         !isStandardCollective(coll));
    if (!allowed) {
      diag.error(opt.loc, "'" + c + "' takes no option '" + opt.name + "'");
      continue;
    }
    if (isFlag && opt.value)
      diag.error(opt.loc, "option 'inplace' takes no value");
    else if (!isFlag && !opt.value)
      diag.error(opt.loc, "option '" + opt.name + "' needs a value ('" +
                              opt.name + " = ...')");
    if (opt.value)
      checkExpr(*opt.value);
  }
  if (c == "custom" && (!seen.count("input") || !seen.count("output")))
    diag.error(algo.collectiveLoc, "a 'custom' collective needs 'input = I' "
                                   "and 'output = O' chunk counts");
}

void Sema::checkFn(const FnDecl &fn) {
  inFn = true;
  scopes.emplace_back();
  for (const FnParam &p : fn.params)
    declareLocal(p.name, p.loc);
  checkStmts(fn.body);
  scopes.clear();
  inFn = false;
}

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

const Sema::Entry *Sema::lookup(llvm::StringRef name) const {
  static const Entry localEntry{Loc(), Entry::What::Local};
  static const Entry bufferEntry{Loc(), Entry::What::Buffer};
  for (auto it = scopes.rbegin(); it != scopes.rend(); ++it)
    if (it->count(name))
      return &localEntry;
  if (inFn && algorithmScratch.count(name))
    return &bufferEntry;
  auto it = globals.find(name);
  return it == globals.end() ? nullptr : &it->second;
}

void Sema::declareGlobal(llvm::StringRef name, Loc loc, Entry::What what) {
  auto it = globals.find(name);
  if (it != globals.end()) {
    if (!it->second.loc)
      diag.error(loc, "'" + name +
                          "' is a built-in name and cannot be "
                          "redefined");
    else
      diag.error(loc, "redefinition of '" + name + "'", it->second.loc,
                 "previous definition is here");
    return;
  }
  for (const auto &scope : scopes) {
    auto local = scope.find(name);
    if (local != scope.end()) {
      diag.error(loc, "redefinition of '" + name + "'", local->second,
                 "previous definition is here");
      return;
    }
  }
  globals[name] = {loc, what};
}

void Sema::declareLocal(llvm::StringRef name, Loc loc) {
  auto global = globals.find(name);
  if (global != globals.end() || (inFn && algorithmScratch.count(name))) {
    Loc prevLoc = global != globals.end() ? global->second.loc
                                          : algorithmScratch.lookup(name);
    if (!prevLoc)
      diag.error(loc, "'" + name +
                          "' is a built-in name and cannot be "
                          "redefined");
    else
      diag.error(loc, "'" + name + "' would hide the global '" + name + "'",
                 prevLoc, "the global is defined here");
    return;
  }
  auto [it, inserted] = scopes.back().try_emplace(name, loc);
  if (!inserted)
    diag.error(loc, "redefinition of '" + name + "'", it->second,
               "previous definition is here");
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

void Sema::checkBlock(const Block &block) {
  scopes.emplace_back();
  checkStmts(block);
  scopes.pop_back();
}

void Sema::checkStmts(const Block &block) {
  for (const StmtPtr &stmt : block.stmts) {
    if (diag.limitReached())
      return;
    checkStmt(*stmt);
  }
}

void Sema::checkStmt(const Stmt &stmt) {
  switch (stmt.getKind()) {
  case Stmt::Kind::Let: {
    auto &s = llvm::cast<LetStmt>(stmt);
    checkExpr(*s.init);
    declareLocal(s.name, s.getLoc());
    return;
  }
  case Stmt::Kind::For: {
    auto &s = llvm::cast<ForStmt>(stmt);
    checkExpr(*s.lo);
    checkExpr(*s.hi);
    if (s.step)
      checkExpr(*s.step);
    // The variable, filter and body share one scope: `let i` in the body
    // of `for i` is a redefinition.
    scopes.emplace_back();
    declareLocal(s.var, s.getLoc());
    if (s.filter)
      checkExpr(*s.filter);
    checkStmts(s.body);
    scopes.pop_back();
    return;
  }
  case Stmt::Kind::If: {
    auto &s = llvm::cast<IfStmt>(stmt);
    checkExpr(*s.cond);
    checkBlock(s.thenBlock);
    if (s.elseBlock)
      checkBlock(*s.elseBlock);
    return;
  }
  case Stmt::Kind::Require:
    checkExpr(*llvm::cast<RequireStmt>(stmt).cond);
    return;
  case Stmt::Kind::Scratch: {
    auto &s = llvm::cast<ScratchStmt>(stmt);
    checkExpr(*s.size);
    if (inFn || scopes.size() != 1) {
      diag.error(s.getLoc(), "'scratch' declarations belong at the top level "
                             "of the algorithm");
      return;
    }
    declareGlobal(s.name, s.getLoc(), Entry::What::Buffer);
    return;
  }
  case Stmt::Kind::On: {
    auto &s = llvm::cast<OnStmt>(stmt);
    if (onDepth > 0)
      diag.error(s.getLoc(), "'on' blocks cannot be nested");
    checkExpr(*s.rank);
    checkExpr(*s.tb);
    if (s.tbEnd)
      checkExpr(*s.tbEnd);
    ++onDepth;
    checkBlock(s.body);
    --onDepth;
    return;
  }
  case Stmt::Kind::Pipeline: {
    auto &s = llvm::cast<PipelineStmt>(stmt);
    if (!inFn && onDepth == 0)
      diag.error(s.getLoc(), "'pipeline' must be inside an 'on' block");
    if (pipelineDepth > 0)
      diag.error(s.getLoc(), "pipelines cannot be nested");
    checkExpr(*s.unit);
    ++pipelineDepth;
    checkBlock(s.body);
    --pipelineDepth;
    return;
  }
  case Stmt::Kind::Expr:
    checkExpr(*llvm::cast<ExprStmt>(stmt).expr, /*asStmt=*/true);
    return;
  case Stmt::Kind::Return: {
    auto &s = llvm::cast<ReturnStmt>(stmt);
    if (!inFn)
      diag.error(s.getLoc(), "'return' outside a function");
    if (s.value)
      checkExpr(*s.value);
    return;
  }
  }
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

bool Sema::checkArity(Loc loc, llvm::StringRef what, Arity a, size_t n) {
  if (n >= a.min && n <= a.max)
    return true;
  std::string expected;
  if (a.max == kVariadic)
    expected = "at least " + std::to_string(a.min);
  else if (a.min == a.max)
    expected = std::to_string(a.min);
  else
    expected = std::to_string(a.min) + " or " + std::to_string(a.max);
  diag.error(loc, "'" + what + "' takes " + expected + " argument" +
                      (expected == "1" ? "" : "s") + ", got " + llvm::Twine(n));
  return false;
}

void Sema::checkArgs(const std::vector<ExprPtr> &args, bool exceptAllowed,
                     bool rangeFirst) {
  for (size_t i = 0; i < args.size(); ++i) {
    const Expr &arg = *args[i];
    if (auto *r = llvm::dyn_cast<RangeExpr>(&arg)) {
      if (!(rangeFirst && i == 0))
        diag.error(r->getLoc(), "a range 'a..b' is only allowed as the "
                                "argument of 'switch'");
      checkExpr(*r->lo);
      checkExpr(*r->hi);
    } else if (auto *x = llvm::dyn_cast<ExceptExpr>(&arg)) {
      if (!exceptAllowed || i == 0)
        diag.error(x->getLoc(), "'except' is only allowed in the sources of "
                                "'reduce' and 'reduce_put'");
      checkExpr(*x->chunks);
      checkExpr(*x->excluded);
    } else {
      checkExpr(arg);
    }
  }
}

void Sema::checkCall(const CallExpr &call, bool asStmt) {
  if (std::optional<BuiltinFn> b = lookupBuiltinFn(call.callee)) {
    if (isOperation(*b)) {
      if (!asStmt)
        diag.error(call.getLoc(),
                   "'" + call.callee + "' is an operation and has no value");
      else if (!inFn && onDepth == 0)
        diag.error(call.getLoc(),
                   "operation '" + call.callee + "' outside an 'on' block");
    }
    if (!checkArity(call.getLoc(), call.callee, arity(*b), call.args.size()))
      return;
    if (*b == BuiltinFn::Memory) {
      // The protocol is a keyword-like argument, not an expression.
      auto *proto = llvm::dyn_cast<NameExpr>(call.args[2].get());
      if (!proto || (proto->name != "LL" && proto->name != "HB"))
        diag.error(call.args[2]->getLoc(),
                   "expected the protocol 'LL' or 'HB' as the third argument "
                   "of 'memory'");
      checkExpr(*call.args[0]);
      checkExpr(*call.args[1]);
      if (call.args.size() == 4)
        checkExpr(*call.args[3]);
      return;
    }
    if (*b == BuiltinFn::Switch && !llvm::isa<RangeExpr>(*call.args[0]))
      diag.error(call.args[0]->getLoc(),
                 "'switch' takes a rank range 'a..b' as its first argument");
    checkArgs(call.args, *b == BuiltinFn::Reduce, *b == BuiltinFn::Switch);
    return;
  }
  auto it = fns.find(call.callee);
  if (it == fns.end()) {
    diag.error(call.getLoc(), "unknown function '" + call.callee + "'");
    checkArgs(call.args, false, false);
    return;
  }
  size_t n = it->second->params.size();
  checkArity(call.getLoc(), call.callee, {unsigned(n), unsigned(n)},
             call.args.size());
  checkArgs(call.args, false, false);
}

void Sema::checkMethod(const MethodCallExpr &call, bool asStmt) {
  checkExpr(*call.receiver);
  std::optional<ChannelMethod> m = lookupMethod(call.method);
  if (!m) {
    diag.error(call.getLoc(),
               "unknown channel operation '" + call.method + "'");
    checkArgs(call.args, false, false);
    return;
  }
  if (!asStmt)
    diag.error(call.getLoc(),
               "channel operation '" + call.method + "' has no value");
  else if (!inFn && onDepth == 0)
    diag.error(call.getLoc(),
               "operation '" + call.method + "' outside an 'on' block");
  checkArity(call.getLoc(), call.method, arity(*m), call.args.size());
  checkArgs(call.args, *m == ChannelMethod::ReducePut, false);
}

void Sema::checkExpr(const Expr &expr, bool asStmt) {
  switch (expr.getKind()) {
  case Expr::Kind::Int:
    return;
  case Expr::Kind::Name: {
    auto &e = llvm::cast<NameExpr>(expr);
    if (lookup(e.name))
      return;
    if (e.name == "LL" || e.name == "HB")
      diag.error(e.getLoc(), "'" + e.name +
                                 "' is only meaningful as the "
                                 "protocol argument of 'memory'");
    else
      diag.error(e.getLoc(), "unknown name '" + e.name + "'");
    return;
  }
  case Expr::Kind::Unary:
    checkExpr(*llvm::cast<UnaryExpr>(expr).operand);
    return;
  case Expr::Kind::Binary: {
    auto &e = llvm::cast<BinaryExpr>(expr);
    checkExpr(*e.lhs);
    checkExpr(*e.rhs);
    return;
  }
  case Expr::Kind::Call:
    checkCall(llvm::cast<CallExpr>(expr), asStmt);
    return;
  case Expr::Kind::Method:
    checkMethod(llvm::cast<MethodCallExpr>(expr), asStmt);
    return;
  case Expr::Kind::Chunk: {
    auto &e = llvm::cast<ChunkExpr>(expr);
    const Entry *entry = lookup(e.buffer);
    if (!entry)
      diag.error(e.getLoc(), "unknown buffer '" + e.buffer + "'");
    else if (entry->what == Entry::What::Value ||
             entry->what == Entry::What::Param)
      diag.error(e.getLoc(), "'" + e.buffer + "' is not a buffer");
    if (e.rank)
      checkExpr(*e.rank);
    checkExpr(*e.first);
    if (e.last)
      checkExpr(*e.last);
    return;
  }
  case Expr::Kind::Range:
    diag.error(expr.getLoc(),
               "a range 'a..b' is only allowed as the argument of 'switch'");
    return;
  case Expr::Kind::Except:
    diag.error(expr.getLoc(), "'except' is only allowed in the sources of "
                              "'reduce' and 'reduce_put'");
    return;
  }
}

bool mscclc::checkModule(const Module &module, DiagReporter &diag) {
  return Sema(module, diag).run();
}

const AlgorithmDecl *mscclc::findAlgorithm(const Module &module) {
  for (const DeclPtr &decl : module.getMainFile().decls)
    if (auto *algo = llvm::dyn_cast<AlgorithmDecl>(decl.get()))
      return algo;
  return nullptr;
}
