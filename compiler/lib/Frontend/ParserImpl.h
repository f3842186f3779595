//===- ParserImpl.h - State shared by the parser's source files -*- C++ -*-===//
//
// The parser is split in two files (declarations and statements in
// Parser.cpp, expressions in ParseExpr.cpp); this private header holds the
// class they both implement.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_LIB_FRONTEND_PARSERIMPL_H
#define MSCCLC_LIB_FRONTEND_PARSERIMPL_H

#include "mscclc/Frontend/AST.h"
#include "mscclc/Frontend/Diagnostics.h"
#include "mscclc/Frontend/Lexer.h"

#include <vector>

namespace mscclc {
namespace detail {

class Parser {
public:
  Parser(std::vector<Token> toks, mlir::StringAttr file, DiagReporter &diag)
      : toks(std::move(toks)), file(file), diag(diag) {}

  std::unique_ptr<ast::SourceFile> parseFile(llvm::StringRef path);

  //===--- Tokens ---------------------------------------------------------===//

  const Token &cur() const { return toks[idx]; }
  const Token &prev() const { return toks[idx ? idx - 1 : 0]; }
  void consume() {
    if (!cur().is(TokenKind::Eof))
      ++idx;
  }
  bool consumeIf(TokenKind kind) {
    if (!cur().is(kind))
      return false;
    consume();
    return true;
  }
  /// Consumes a `kind` token or reports "expected <kind> <context>".
  bool expect(TokenKind kind, const llvm::Twine &context);
  /// Consumes the contextual keyword `word` or reports its absence.
  bool expectWord(llvm::StringRef word, const llvm::Twine &context);
  ast::Loc locOf(const Token &tok) const {
    return mlir::FileLineColLoc::get(file, tok.line, tok.col);
  }
  ast::Loc curLoc() const { return locOf(cur()); }
  /// "'}'", "identifier 'foo'", "integer 12": what a message says was found.
  std::string found() const;
  void errorAtCur(const llvm::Twine &msg) { error(curLoc(), msg); }
  /// Reports a syntax error, unless the file was abandoned.
  void error(mlir::Location loc, const llvm::Twine &msg) {
    if (!abandoned)
      diag.error(loc, msg);
  }
  void error(mlir::Location loc, const llvm::Twine &msg, mlir::Location noteLoc,
             const llvm::Twine &note) {
    if (!abandoned)
      diag.error(loc, msg, noteLoc, note);
  }

  //===--- Nesting --------------------------------------------------------===//

  /// Counts one level of nesting for its lifetime. `ok` is false past
  /// kMaxNesting: the error is reported and the rest of the file abandoned
  /// (such input is generated or garbage, and recovering inside it would
  /// only produce follow-up errors), so the caller must give up.
  class NestingGuard {
  public:
    explicit NestingGuard(Parser &p);
    ~NestingGuard() { --p.depth; }
    bool ok;

  private:
    Parser &p;
  };

  //===--- Declarations and statements (Parser.cpp) -----------------------===//

  ast::DeclPtr parseDecl();
  ast::DeclPtr parseImport();
  ast::DeclPtr parseParam();
  ast::DeclPtr parseFn();
  ast::DeclPtr parseAlgorithm();
  bool parseAlgorithmOptions(ast::AlgorithmDecl &algo);
  void syncToDecl();

  bool parseBlock(ast::Block &block);
  ast::StmtPtr parseStmt();
  ast::StmtPtr parseLet();
  ast::StmtPtr parseFor();
  ast::StmtPtr parseIf();
  ast::StmtPtr parseRequire();
  ast::StmtPtr parseScratch();
  ast::StmtPtr parseOn();
  ast::StmtPtr parsePipeline();
  ast::StmtPtr parseReturn();
  ast::StmtPtr parseExprStmt();
  void syncToStmtEnd();
  bool isDeclStart() const;

  //===--- Expressions (ParseExpr.cpp) ------------------------------------===//

  ast::ExprPtr parseExpr();
  ast::ExprPtr parseBinary(int minPrec);
  ast::ExprPtr parseUnary();
  ast::ExprPtr parsePostfix();
  ast::ExprPtr parsePrimary();
  /// The rank after `@`: a literal, a name, a call or a parenthesized
  /// expression (not a chunk: the `[` that follows is the chunk's index).
  ast::ExprPtr parseRankAtom();
  ast::ExprPtr parseChunk(const Token &nameTok, ast::ExprPtr rank);
  ast::ExprPtr parseParenExpr();
  /// Parses `(args)`, the current token being `(`.
  bool parseArgs(std::vector<ast::ExprPtr> &args);
  /// One call argument: an expression, a range `a..b`, or `chunks except i`.
  ast::ExprPtr parseArg();

private:
  std::vector<Token> toks;
  size_t idx = 0;
  mlir::StringAttr file;
  DiagReporter &diag;
  unsigned depth = 0;
  bool abandoned = false; // parsing stopped: skip to the end silently
};

} // namespace detail
} // namespace mscclc

#endif // MSCCLC_LIB_FRONTEND_PARSERIMPL_H
