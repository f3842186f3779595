//===- AST.h - Syntax tree of .mscl source files ---------------*- C++ -*-===//
//
// The parser builds one tree per source file; a Module holds the main file
// and every file it imports. Nodes only record what was written (names are
// strings, nothing is resolved); Sema checks names and the Evaluator gives
// the tree its meaning. Every node carries the FileLineColLoc it started at,
// so later stages can report errors through MLIR's diagnostic engine.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_FRONTEND_AST_H
#define MSCCLC_FRONTEND_AST_H

#include "mlir/IR/Location.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Casting.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mscclc {
namespace ast {

/// Where a node starts. Null only for synthesized nodes (there are none yet).
using Loc = mlir::FileLineColLoc;

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

class Expr {
public:
  enum class Kind {
    Int,
    Name,
    Unary,
    Binary,
    Call,
    Method,
    Chunk,
    Range,
    Except
  };

  Expr(Kind kind, Loc loc) : kind(kind), loc(loc) {}
  virtual ~Expr() = default;
  Kind getKind() const { return kind; }
  Loc getLoc() const { return loc; }

private:
  const Kind kind;
  Loc loc;
};
using ExprPtr = std::unique_ptr<Expr>;

/// An integer literal, suffixes (K, M, G) already applied.
class IntExpr : public Expr {
public:
  IntExpr(Loc loc, int64_t value) : Expr(Kind::Int, loc), value(value) {}
  int64_t value;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Int; }
};

/// A use of a name: a let, a loop variable, a parameter, a built-in value or
/// a buffer.
class NameExpr : public Expr {
public:
  NameExpr(Loc loc, std::string name) : Expr(Kind::Name, loc), name(name) {}
  std::string name;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Name; }
};

enum class UnaryOp { Neg, Not };

class UnaryExpr : public Expr {
public:
  UnaryExpr(Loc loc, UnaryOp op, ExprPtr operand)
      : Expr(Kind::Unary, loc), op(op), operand(std::move(operand)) {}
  UnaryOp op;
  ExprPtr operand;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Unary; }
};

enum class BinaryOp {
  Or,
  And,
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  Add,
  Sub,
  Mul,
  Div,
  Rem
};

/// Returns the operator as written, e.g. "<=".
llvm::StringRef spelling(BinaryOp op);

/// A binary operation; its location is the operator's, so that errors such as
/// a division by zero point at the operator.
class BinaryExpr : public Expr {
public:
  BinaryExpr(Loc loc, BinaryOp op, ExprPtr lhs, ExprPtr rhs)
      : Expr(Kind::Binary, loc), op(op), lhs(std::move(lhs)),
        rhs(std::move(rhs)) {}
  BinaryOp op;
  ExprPtr lhs, rhs;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Binary; }
};

/// `name(args)`: a user function, a built-in function (`min`, `node`, ...),
/// a channel constructor (`memory`, `port`, `switch`) or a local operation
/// (`copy`, `reduce`, `barrier`).
class CallExpr : public Expr {
public:
  CallExpr(Loc loc, std::string callee, std::vector<ExprPtr> args)
      : Expr(Kind::Call, loc), callee(std::move(callee)),
        args(std::move(args)) {}
  std::string callee;
  std::vector<ExprPtr> args;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Call; }
};

/// `receiver.method(args)`: a channel operation. The location is the method
/// name's.
class MethodCallExpr : public Expr {
public:
  MethodCallExpr(Loc loc, ExprPtr receiver, std::string method,
                 std::vector<ExprPtr> args)
      : Expr(Kind::Method, loc), receiver(std::move(receiver)),
        method(std::move(method)), args(std::move(args)) {}
  ExprPtr receiver;
  std::string method;
  std::vector<ExprPtr> args;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Method; }
};

/// `buf@rank[first]`, `buf@rank[first..last]`, `buf[first]`. `rank` is null
/// when the rank of the enclosing `on` block is meant; `last` is null for a
/// single chunk.
class ChunkExpr : public Expr {
public:
  ChunkExpr(Loc loc, std::string buffer, ExprPtr rank, ExprPtr first,
            ExprPtr last)
      : Expr(Kind::Chunk, loc), buffer(std::move(buffer)),
        rank(std::move(rank)), first(std::move(first)), last(std::move(last)) {}
  std::string buffer;
  ExprPtr rank, first, last;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Chunk; }
};

/// `lo..hi` as a call argument (`switch(0..8)`).
class RangeExpr : public Expr {
public:
  RangeExpr(Loc loc, ExprPtr lo, ExprPtr hi)
      : Expr(Kind::Range, loc), lo(std::move(lo)), hi(std::move(hi)) {}
  ExprPtr lo, hi;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Range; }
};

/// `chunks except index` as a reduce source.
class ExceptExpr : public Expr {
public:
  ExceptExpr(Loc loc, ExprPtr chunks, ExprPtr excluded)
      : Expr(Kind::Except, loc), chunks(std::move(chunks)),
        excluded(std::move(excluded)) {}
  ExprPtr chunks, excluded;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Except; }
};

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

class Stmt;
using StmtPtr = std::unique_ptr<Stmt>;

/// `{ ... }`; `loc` is the opening brace.
struct Block {
  Loc loc;
  std::vector<StmtPtr> stmts;
};

class Stmt {
public:
  enum class Kind {
    Let,
    For,
    If,
    Require,
    Scratch,
    On,
    Pipeline,
    Expr,
    Return
  };

  Stmt(Kind kind, Loc loc) : kind(kind), loc(loc) {}
  virtual ~Stmt() = default;
  Kind getKind() const { return kind; }
  Loc getLoc() const { return loc; }

private:
  const Kind kind;
  Loc loc;
};

class LetStmt : public Stmt {
public:
  LetStmt(Loc loc, std::string name, ExprPtr init)
      : Stmt(Kind::Let, loc), name(std::move(name)), init(std::move(init)) {}
  std::string name;
  ExprPtr init;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Let; }
};

/// `for var in lo..hi [step s] [if filter] { body }`.
class ForStmt : public Stmt {
public:
  ForStmt(Loc loc) : Stmt(Kind::For, loc) {}
  std::string var;
  ExprPtr lo, hi, step, filter; // step and filter may be null
  Block body;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::For; }
};

/// `if cond { then } else { ... }`; an `else if` is an IfStmt alone in the
/// else block.
class IfStmt : public Stmt {
public:
  IfStmt(Loc loc) : Stmt(Kind::If, loc) {}
  ExprPtr cond;
  Block thenBlock;
  std::unique_ptr<Block> elseBlock; // null without `else`
  static bool classof(const Stmt *s) { return s->getKind() == Kind::If; }
};

class RequireStmt : public Stmt {
public:
  RequireStmt(Loc loc, ExprPtr cond, std::string message)
      : Stmt(Kind::Require, loc), cond(std::move(cond)),
        message(std::move(message)) {}
  ExprPtr cond;
  std::string message;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Require; }
};

/// `scratch name[size];`
class ScratchStmt : public Stmt {
public:
  ScratchStmt(Loc loc, std::string name, ExprPtr size)
      : Stmt(Kind::Scratch, loc), name(std::move(name)), size(std::move(size)) {
  }
  std::string name;
  ExprPtr size;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Scratch; }
};

/// `on rank R, tb T { body }` or `on rank R, tbs A..B { body }` (then
/// `tbEnd` is B).
class OnStmt : public Stmt {
public:
  OnStmt(Loc loc) : Stmt(Kind::On, loc) {}
  ExprPtr rank, tb, tbEnd;
  Block body;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::On; }
};

/// `pipeline(unit = BYTES) { body }`
class PipelineStmt : public Stmt {
public:
  PipelineStmt(Loc loc) : Stmt(Kind::Pipeline, loc) {}
  ExprPtr unit;
  Block body;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Pipeline; }
};

/// A call or channel operation used as a statement.
class ExprStmt : public Stmt {
public:
  ExprStmt(Loc loc, ExprPtr expr)
      : Stmt(Kind::Expr, loc), expr(std::move(expr)) {}
  ExprPtr expr;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Expr; }
};

class ReturnStmt : public Stmt {
public:
  ReturnStmt(Loc loc, ExprPtr value)
      : Stmt(Kind::Return, loc), value(std::move(value)) {}
  ExprPtr value; // may be null
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Return; }
};

//===----------------------------------------------------------------------===//
// Declarations
//===----------------------------------------------------------------------===//

class Decl {
public:
  enum class Kind { Import, Param, Fn, Algorithm };

  Decl(Kind kind, Loc loc, std::string name)
      : name(std::move(name)), kind(kind), loc(loc) {}
  virtual ~Decl() = default;
  Kind getKind() const { return kind; }
  Loc getLoc() const { return loc; }

  /// The declared name; for an import, the path as written.
  std::string name;

private:
  const Kind kind;
  Loc loc;
};
using DeclPtr = std::unique_ptr<Decl>;

class ImportDecl : public Decl {
public:
  ImportDecl(Loc loc, std::string path, Loc pathLoc)
      : Decl(Kind::Import, loc, std::move(path)), pathLoc(pathLoc) {}
  Loc pathLoc;
  static bool classof(const Decl *d) { return d->getKind() == Kind::Import; }
};

class ParamDecl : public Decl {
public:
  ParamDecl(Loc loc, std::string name, ExprPtr value)
      : Decl(Kind::Param, loc, std::move(name)), value(std::move(value)) {}
  ExprPtr value;
  static bool classof(const Decl *d) { return d->getKind() == Kind::Param; }
};

struct FnParam {
  std::string name;
  Loc loc;
};

class FnDecl : public Decl {
public:
  FnDecl(Loc loc, std::string name) : Decl(Kind::Fn, loc, std::move(name)) {}
  std::vector<FnParam> params;
  Block body;
  static bool classof(const Decl *d) { return d->getKind() == Kind::Fn; }
};

/// One `name [= value]` entry of an algorithm header's option list.
struct AlgorithmOption {
  std::string name;
  Loc loc;
  ExprPtr value; // null for flags such as `inplace`
};

/// `algorithm name : collective(options) { body }`
class AlgorithmDecl : public Decl {
public:
  AlgorithmDecl(Loc loc, std::string name)
      : Decl(Kind::Algorithm, loc, std::move(name)) {}
  std::string collective;
  Loc collectiveLoc;
  std::vector<AlgorithmOption> options;
  Block body;
  static bool classof(const Decl *d) { return d->getKind() == Kind::Algorithm; }
};

//===----------------------------------------------------------------------===//
// Files and modules
//===----------------------------------------------------------------------===//

struct SourceFile {
  /// The SourceMgr buffer identifier, also the filename in locations.
  std::string path;
  std::vector<DeclPtr> decls;
};

/// All files of one compilation. Files come in dependency order: every file
/// after the files it imports, so the main file is last.
struct Module {
  std::vector<std::unique_ptr<SourceFile>> files;

  const SourceFile &getMainFile() const { return *files.back(); }
};

} // namespace ast
} // namespace mscclc

#endif // MSCCLC_FRONTEND_AST_H
