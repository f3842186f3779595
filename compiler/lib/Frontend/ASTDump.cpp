//===- ASTDump.cpp - Indented text form of the syntax tree ----------------===//
//
// `mscclc --emit=ast` output: one node per line, children indented by two
// spaces, each line ending with the node's `line:col`. Meant for people and
// FileCheck, so the format is plain and stable.
//
//===----------------------------------------------------------------------===//

#include "mscclc/Frontend/AST.h"
#include "mscclc/Frontend/Frontend.h"

#include "llvm/Support/raw_ostream.h"

using namespace mscclc;
using namespace mscclc::ast;

llvm::StringRef ast::spelling(BinaryOp op) {
  switch (op) {
  case BinaryOp::Or:
    return "||";
  case BinaryOp::And:
    return "&&";
  case BinaryOp::Eq:
    return "==";
  case BinaryOp::Ne:
    return "!=";
  case BinaryOp::Lt:
    return "<";
  case BinaryOp::Le:
    return "<=";
  case BinaryOp::Gt:
    return ">";
  case BinaryOp::Ge:
    return ">=";
  case BinaryOp::Add:
    return "+";
  case BinaryOp::Sub:
    return "-";
  case BinaryOp::Mul:
    return "*";
  case BinaryOp::Div:
    return "/";
  case BinaryOp::Rem:
    return "%";
  }
  return "?";
}

namespace {

class Dumper {
public:
  explicit Dumper(llvm::raw_ostream &os) : os(os) {}

  void module(const Module &m) {
    line("Module");
    Indent in(*this);
    for (const auto &file : m.files) {
      line("File \"" + file->path + "\"");
      Indent in2(*this);
      for (const DeclPtr &decl : file->decls)
        dumpDecl(*decl);
    }
  }

private:
  struct Indent {
    explicit Indent(Dumper &d) : d(d) { d.depth += 1; }
    ~Indent() { d.depth -= 1; }
    Dumper &d;
  };

  /// Starts a line at the current depth.
  llvm::raw_ostream &start() { return os.indent(2 * depth); }
  void line(const llvm::Twine &text) { start() << text << "\n"; }
  void line(const llvm::Twine &text, Loc loc) {
    start() << text;
    if (loc)
      os << " <" << loc.getLine() << ":" << loc.getColumn() << ">";
    os << "\n";
  }

  void dumpDecl(const Decl &decl);
  void dumpBlock(const Block &block);
  void dumpStmt(const Stmt &stmt);
  void dumpExpr(const Expr &expr);
  /// Dumps `expr` under a labelled line, for children whose role is not
  /// obvious from their position (a loop's step, an `on` block's rank).
  void labelled(llvm::StringRef label, const Expr *expr) {
    if (!expr)
      return;
    line(label + ":");
    Indent in(*this);
    dumpExpr(*expr);
  }

  llvm::raw_ostream &os;
  unsigned depth = 0;
};

} // namespace

void Dumper::dumpDecl(const Decl &decl) {
  if (auto *imp = llvm::dyn_cast<ImportDecl>(&decl)) {
    line("Import \"" + imp->name + "\"", imp->getLoc());
  } else if (auto *param = llvm::dyn_cast<ParamDecl>(&decl)) {
    line("Param " + param->name, param->getLoc());
    Indent in(*this);
    dumpExpr(*param->value);
  } else if (auto *fn = llvm::dyn_cast<FnDecl>(&decl)) {
    std::string params;
    for (const FnParam &p : fn->params)
      params += (params.empty() ? "" : ", ") + p.name;
    line("Fn " + fn->name + "(" + params + ")", fn->getLoc());
    Indent in(*this);
    dumpBlock(fn->body);
  } else if (auto *algo = llvm::dyn_cast<AlgorithmDecl>(&decl)) {
    line("Algorithm " + algo->name + " : " + algo->collective, algo->getLoc());
    Indent in(*this);
    for (const AlgorithmOption &opt : algo->options) {
      line("Option " + opt.name, opt.loc);
      Indent in2(*this);
      if (opt.value)
        dumpExpr(*opt.value);
    }
    dumpBlock(algo->body);
  }
}

void Dumper::dumpBlock(const Block &block) {
  line("Block", block.loc);
  Indent in(*this);
  for (const StmtPtr &stmt : block.stmts)
    dumpStmt(*stmt);
}

void Dumper::dumpStmt(const Stmt &stmt) {
  switch (stmt.getKind()) {
  case Stmt::Kind::Let: {
    auto &s = llvm::cast<LetStmt>(stmt);
    line("Let " + s.name, s.getLoc());
    Indent in(*this);
    dumpExpr(*s.init);
    return;
  }
  case Stmt::Kind::For: {
    auto &s = llvm::cast<ForStmt>(stmt);
    line("For " + s.var, s.getLoc());
    Indent in(*this);
    labelled("from", s.lo.get());
    labelled("to", s.hi.get());
    labelled("step", s.step.get());
    labelled("if", s.filter.get());
    dumpBlock(s.body);
    return;
  }
  case Stmt::Kind::If: {
    auto &s = llvm::cast<IfStmt>(stmt);
    line("If", s.getLoc());
    Indent in(*this);
    dumpExpr(*s.cond);
    dumpBlock(s.thenBlock);
    if (s.elseBlock) {
      line("Else");
      Indent in2(*this);
      dumpBlock(*s.elseBlock);
    }
    return;
  }
  case Stmt::Kind::Require: {
    auto &s = llvm::cast<RequireStmt>(stmt);
    line("Require \"" + s.message + "\"", s.getLoc());
    Indent in(*this);
    dumpExpr(*s.cond);
    return;
  }
  case Stmt::Kind::Scratch: {
    auto &s = llvm::cast<ScratchStmt>(stmt);
    line("Scratch " + s.name, s.getLoc());
    Indent in(*this);
    dumpExpr(*s.size);
    return;
  }
  case Stmt::Kind::On: {
    auto &s = llvm::cast<OnStmt>(stmt);
    line(s.tbEnd ? "On tbs" : "On tb", s.getLoc());
    Indent in(*this);
    labelled("rank", s.rank.get());
    labelled(s.tbEnd ? "tbs from" : "tb", s.tb.get());
    labelled("tbs to", s.tbEnd.get());
    dumpBlock(s.body);
    return;
  }
  case Stmt::Kind::Pipeline: {
    auto &s = llvm::cast<PipelineStmt>(stmt);
    line("Pipeline", s.getLoc());
    Indent in(*this);
    labelled("unit", s.unit.get());
    dumpBlock(s.body);
    return;
  }
  case Stmt::Kind::Expr: {
    auto &s = llvm::cast<ExprStmt>(stmt);
    line("ExprStmt", s.getLoc());
    Indent in(*this);
    dumpExpr(*s.expr);
    return;
  }
  case Stmt::Kind::Return: {
    auto &s = llvm::cast<ReturnStmt>(stmt);
    line("Return", s.getLoc());
    Indent in(*this);
    if (s.value)
      dumpExpr(*s.value);
    return;
  }
  }
}

void Dumper::dumpExpr(const Expr &expr) {
  switch (expr.getKind()) {
  case Expr::Kind::Int:
    line("Int " + llvm::Twine(llvm::cast<IntExpr>(expr).value), expr.getLoc());
    return;
  case Expr::Kind::Name:
    line("Name " + llvm::cast<NameExpr>(expr).name, expr.getLoc());
    return;
  case Expr::Kind::Unary: {
    auto &e = llvm::cast<UnaryExpr>(expr);
    line(e.op == UnaryOp::Neg ? "Unary -" : "Unary !", e.getLoc());
    Indent in(*this);
    dumpExpr(*e.operand);
    return;
  }
  case Expr::Kind::Binary: {
    auto &e = llvm::cast<BinaryExpr>(expr);
    line("Binary " + spelling(e.op), e.getLoc());
    Indent in(*this);
    dumpExpr(*e.lhs);
    dumpExpr(*e.rhs);
    return;
  }
  case Expr::Kind::Call: {
    auto &e = llvm::cast<CallExpr>(expr);
    line("Call " + e.callee, e.getLoc());
    Indent in(*this);
    for (const ExprPtr &arg : e.args)
      dumpExpr(*arg);
    return;
  }
  case Expr::Kind::Method: {
    auto &e = llvm::cast<MethodCallExpr>(expr);
    line("MethodCall ." + e.method, e.getLoc());
    Indent in(*this);
    labelled("on", e.receiver.get());
    for (const ExprPtr &arg : e.args)
      dumpExpr(*arg);
    return;
  }
  case Expr::Kind::Chunk: {
    auto &e = llvm::cast<ChunkExpr>(expr);
    line("Chunk " + e.buffer, e.getLoc());
    Indent in(*this);
    labelled("rank", e.rank.get());
    labelled("index", e.first.get());
    labelled("to", e.last.get());
    return;
  }
  case Expr::Kind::Range: {
    auto &e = llvm::cast<RangeExpr>(expr);
    line("Range", e.getLoc());
    Indent in(*this);
    dumpExpr(*e.lo);
    dumpExpr(*e.hi);
    return;
  }
  case Expr::Kind::Except: {
    auto &e = llvm::cast<ExceptExpr>(expr);
    line("Except", e.getLoc());
    Indent in(*this);
    dumpExpr(*e.chunks);
    dumpExpr(*e.excluded);
    return;
  }
  }
}

void mscclc::dumpAST(const Module &module, llvm::raw_ostream &os) {
  Dumper(os).module(module);
}
