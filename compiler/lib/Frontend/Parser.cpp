//===- Parser.cpp - Declarations and statements of .mscl ------------------===//
//
// Recursive descent with one token of lookahead (plus `prev()` for placing
// "expected ';'" at the end of the previous line). Every parse function
// returns null after reporting an error; the enclosing block or the top level
// then skips ahead (syncToStmtEnd / syncToDecl) and carries on, so a file
// with several mistakes gets several messages.
//
//===----------------------------------------------------------------------===//

#include "ParserImpl.h"

#include "mscclc/Frontend/Parser.h"

#include "llvm/Support/raw_ostream.h"

using namespace mscclc;
using namespace mscclc::detail;

Parser::NestingGuard::NestingGuard(Parser &p) : p(p) {
  ok = ++p.depth <= kMaxNesting;
  if (!ok && !p.abandoned) {
    p.errorAtCur("nesting is too deep (the limit is " +
                 llvm::Twine(kMaxNesting) + " levels)");
    p.abandoned = true;
    p.idx = p.toks.size() - 1; // the Eof token
  }
}

std::string Parser::found() const {
  const Token &t = cur();
  switch (t.kind) {
  case TokenKind::Ident:
    return ("identifier '" + t.text + "'").str();
  case TokenKind::Int:
    return ("integer " + t.text).str();
  case TokenKind::String:
    return "a string";
  default:
    return describe(t.kind).str();
  }
}

bool Parser::expect(TokenKind kind, const llvm::Twine &context) {
  if (consumeIf(kind))
    return true;
  std::string msg =
      ("expected " + describe(kind) + " " + context + ", found " + found())
          .str();
  // A missing terminator is best shown right after the previous token when
  // the next token sits on a later line (as in "let x = 1 <newline> let").
  const Token &p = prev();
  if (idx > 0 && cur().line != p.line)
    error(mlir::FileLineColLoc::get(file, p.line, p.col + p.text.size()), msg);
  else
    errorAtCur(msg);
  return false;
}

bool Parser::expectWord(llvm::StringRef word, const llvm::Twine &context) {
  if (cur().isWord(word)) {
    consume();
    return true;
  }
  errorAtCur("expected '" + word + "' " + context + ", found " + found());
  return false;
}

bool Parser::isDeclStart() const {
  switch (cur().kind) {
  case TokenKind::KwAlgorithm:
  case TokenKind::KwFn:
  case TokenKind::KwImport:
  case TokenKind::KwParam:
    return true;
  default:
    return false;
  }
}

//===----------------------------------------------------------------------===//
// Declarations
//===----------------------------------------------------------------------===//

std::unique_ptr<ast::SourceFile> Parser::parseFile(llvm::StringRef path) {
  auto result = std::make_unique<ast::SourceFile>();
  result->path = path.str();
  while (!cur().is(TokenKind::Eof) && !diag.limitReached()) {
    if (!isDeclStart()) {
      errorAtCur("expected 'import', 'param', 'fn' or 'algorithm', found " +
                 found());
      syncToDecl();
      continue;
    }
    size_t before = idx;
    if (ast::DeclPtr decl = parseDecl())
      result->decls.push_back(std::move(decl));
    else if (idx == before || !isDeclStart())
      syncToDecl();
  }
  return result;
}

void Parser::syncToDecl() {
  consume();
  while (!cur().is(TokenKind::Eof) && !isDeclStart())
    consume();
}

ast::DeclPtr Parser::parseDecl() {
  switch (cur().kind) {
  case TokenKind::KwImport:
    return parseImport();
  case TokenKind::KwParam:
    return parseParam();
  case TokenKind::KwFn:
    return parseFn();
  default:
    return parseAlgorithm();
  }
}

ast::DeclPtr Parser::parseImport() {
  ast::Loc loc = curLoc();
  consume();
  if (!cur().is(TokenKind::String)) {
    errorAtCur("expected a file name string after 'import', found " + found());
    return nullptr;
  }
  auto decl = std::make_unique<ast::ImportDecl>(loc, cur().strValue, curLoc());
  consume();
  if (!expect(TokenKind::Semi, "after the import"))
    return nullptr;
  return decl;
}

ast::DeclPtr Parser::parseParam() {
  ast::Loc loc = curLoc();
  consume();
  if (!cur().is(TokenKind::Ident)) {
    errorAtCur("expected a parameter name after 'param', found " + found());
    return nullptr;
  }
  std::string name = cur().text.str();
  consume();
  if (!expect(TokenKind::Assign, "after the parameter name"))
    return nullptr;
  ast::ExprPtr value = parseExpr();
  if (!value || !expect(TokenKind::Semi, "after the parameter"))
    return nullptr;
  return std::make_unique<ast::ParamDecl>(loc, name, std::move(value));
}

ast::DeclPtr Parser::parseFn() {
  consume();
  if (!cur().is(TokenKind::Ident)) {
    errorAtCur("expected a function name after 'fn', found " + found());
    return nullptr;
  }
  auto fn = std::make_unique<ast::FnDecl>(curLoc(), cur().text.str());
  consume();
  if (!expect(TokenKind::LParen, "after the function name"))
    return nullptr;
  if (!cur().is(TokenKind::RParen)) {
    do {
      if (!cur().is(TokenKind::Ident)) {
        errorAtCur("expected a parameter name, found " + found());
        return nullptr;
      }
      fn->params.push_back({cur().text.str(), curLoc()});
      consume();
    } while (consumeIf(TokenKind::Comma));
  }
  if (!expect(TokenKind::RParen, "after the function parameters"))
    return nullptr;
  if (!parseBlock(fn->body))
    return nullptr;
  return fn;
}

ast::DeclPtr Parser::parseAlgorithm() {
  consume();
  if (!cur().is(TokenKind::Ident)) {
    errorAtCur("expected the algorithm's name, found " + found());
    return nullptr;
  }
  auto algo = std::make_unique<ast::AlgorithmDecl>(curLoc(), cur().text.str());
  consume();
  if (!expect(TokenKind::Colon, "after the algorithm name"))
    return nullptr;
  if (!cur().is(TokenKind::Ident)) {
    errorAtCur("expected a collective (allreduce, allgather, reducescatter, "
               "broadcast, reduce, gather, scatter, alltoall or custom), "
               "found " +
               found());
    return nullptr;
  }
  algo->collective = cur().text.str();
  algo->collectiveLoc = curLoc();
  consume();
  if (cur().is(TokenKind::LParen) && !parseAlgorithmOptions(*algo))
    return nullptr;
  if (!parseBlock(algo->body))
    return nullptr;
  return algo;
}

bool Parser::parseAlgorithmOptions(ast::AlgorithmDecl &algo) {
  consume(); // (
  if (consumeIf(TokenKind::RParen))
    return true;
  do {
    if (!cur().is(TokenKind::Ident)) {
      errorAtCur("expected a collective option, found " + found());
      return false;
    }
    ast::AlgorithmOption opt;
    opt.name = cur().text.str();
    opt.loc = curLoc();
    consume();
    if (consumeIf(TokenKind::Assign)) {
      opt.value = parseExpr();
      if (!opt.value)
        return false;
    }
    algo.options.push_back(std::move(opt));
  } while (consumeIf(TokenKind::Comma));
  return expect(TokenKind::RParen, "after the collective options");
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

bool Parser::parseBlock(ast::Block &block) {
  NestingGuard guard(*this);
  if (!guard.ok)
    return false;
  block.loc = curLoc();
  if (!expect(TokenKind::LBrace, "to open a block"))
    return false;
  while (!consumeIf(TokenKind::RBrace)) {
    if (diag.limitReached())
      return false;
    if (cur().is(TokenKind::Eof) || isDeclStart()) {
      // Most likely a forgotten '}': stop here and let the top level parse
      // the declaration that follows.
      error(curLoc(), "expected '}' to close the block, found " + found(),
            block.loc, "the block starts here");
      return false;
    }
    if (ast::StmtPtr stmt = parseStmt())
      block.stmts.push_back(std::move(stmt));
    else
      syncToStmtEnd();
  }
  return true;
}

void Parser::syncToStmtEnd() {
  unsigned braces = 0;
  while (!cur().is(TokenKind::Eof)) {
    if (braces == 0 && isDeclStart())
      return;
    switch (cur().kind) {
    case TokenKind::Semi:
      if (braces == 0) {
        consume();
        return;
      }
      break;
    case TokenKind::LBrace:
      ++braces;
      break;
    case TokenKind::RBrace:
      if (braces == 0)
        return; // the enclosing block's end
      if (--braces == 0) {
        consume(); // a statement that ends with a block
        return;
      }
      break;
    default:
      break;
    }
    consume();
  }
}

ast::StmtPtr Parser::parseStmt() {
  switch (cur().kind) {
  case TokenKind::KwLet:
    return parseLet();
  case TokenKind::KwFor:
    return parseFor();
  case TokenKind::KwIf:
    return parseIf();
  case TokenKind::KwRequire:
    return parseRequire();
  case TokenKind::KwScratch:
    return parseScratch();
  case TokenKind::KwOn:
    return parseOn();
  case TokenKind::KwPipeline:
    return parsePipeline();
  case TokenKind::KwReturn:
    return parseReturn();
  case TokenKind::KwElse:
    errorAtCur("'else' without a matching 'if'");
    return nullptr;
  default:
    return parseExprStmt();
  }
}

ast::StmtPtr Parser::parseLet() {
  ast::Loc loc = curLoc();
  consume();
  if (!cur().is(TokenKind::Ident)) {
    errorAtCur("expected a name after 'let', found " + found());
    return nullptr;
  }
  std::string name = cur().text.str();
  consume();
  if (!expect(TokenKind::Assign, "after the name in 'let'"))
    return nullptr;
  ast::ExprPtr init = parseExpr();
  if (!init || !expect(TokenKind::Semi, "after the 'let' statement"))
    return nullptr;
  return std::make_unique<ast::LetStmt>(loc, name, std::move(init));
}

ast::StmtPtr Parser::parseFor() {
  auto stmt = std::make_unique<ast::ForStmt>(curLoc());
  consume();
  if (!cur().is(TokenKind::Ident)) {
    errorAtCur("expected a loop variable after 'for', found " + found());
    return nullptr;
  }
  stmt->var = cur().text.str();
  consume();
  if (!expect(TokenKind::KwIn, "after the loop variable"))
    return nullptr;
  if (!(stmt->lo = parseExpr()) ||
      !expect(TokenKind::DotDot, "in the loop range 'a..b'") ||
      !(stmt->hi = parseExpr()))
    return nullptr;
  if (cur().isWord("step")) {
    consume();
    if (!(stmt->step = parseExpr()))
      return nullptr;
  }
  if (consumeIf(TokenKind::KwIf) && !(stmt->filter = parseExpr()))
    return nullptr;
  if (!parseBlock(stmt->body))
    return nullptr;
  return stmt;
}

ast::StmtPtr Parser::parseIf() {
  // `else if` chains recurse here, so each link counts as one nesting level.
  NestingGuard guard(*this);
  if (!guard.ok)
    return nullptr;
  auto stmt = std::make_unique<ast::IfStmt>(curLoc());
  consume();
  if (!(stmt->cond = parseExpr()) || !parseBlock(stmt->thenBlock))
    return nullptr;
  if (!consumeIf(TokenKind::KwElse))
    return stmt;
  stmt->elseBlock = std::make_unique<ast::Block>();
  if (cur().is(TokenKind::KwIf)) {
    stmt->elseBlock->loc = curLoc();
    ast::StmtPtr elseIf = parseIf();
    if (!elseIf)
      return nullptr;
    stmt->elseBlock->stmts.push_back(std::move(elseIf));
    return stmt;
  }
  if (!parseBlock(*stmt->elseBlock))
    return nullptr;
  return stmt;
}

ast::StmtPtr Parser::parseRequire() {
  ast::Loc loc = curLoc();
  consume();
  ast::ExprPtr cond = parseExpr();
  if (!cond)
    return nullptr;
  std::string message;
  if (consumeIf(TokenKind::Comma)) {
    if (!cur().is(TokenKind::String)) {
      errorAtCur("expected a message string after ',' in 'require', found " +
                 found());
      return nullptr;
    }
    message = cur().strValue;
    consume();
  }
  if (!expect(TokenKind::Semi, "after the 'require' statement"))
    return nullptr;
  return std::make_unique<ast::RequireStmt>(loc, std::move(cond), message);
}

ast::StmtPtr Parser::parseScratch() {
  ast::Loc loc = curLoc();
  consume();
  if (!cur().is(TokenKind::Ident)) {
    errorAtCur("expected a buffer name after 'scratch', found " + found());
    return nullptr;
  }
  std::string name = cur().text.str();
  consume();
  if (!expect(TokenKind::LBracket, "after the scratch buffer name"))
    return nullptr;
  ast::ExprPtr size = parseExpr();
  if (!size || !expect(TokenKind::RBracket, "after the scratch buffer size") ||
      !expect(TokenKind::Semi, "after the 'scratch' declaration"))
    return nullptr;
  return std::make_unique<ast::ScratchStmt>(loc, name, std::move(size));
}

ast::StmtPtr Parser::parseOn() {
  auto stmt = std::make_unique<ast::OnStmt>(curLoc());
  consume();
  if (!expectWord("rank", "after 'on'") || !(stmt->rank = parseExpr()) ||
      !expect(TokenKind::Comma, "after the rank in 'on'"))
    return nullptr;
  if (cur().isWord("tb")) {
    consume();
    if (!(stmt->tb = parseExpr()))
      return nullptr;
  } else if (cur().isWord("tbs")) {
    consume();
    if (!(stmt->tb = parseExpr()) ||
        !expect(TokenKind::DotDot, "in the thread-block range 'tbs A..B'") ||
        !(stmt->tbEnd = parseExpr()))
      return nullptr;
  } else {
    errorAtCur("expected 'tb' or 'tbs' after the rank, found " + found());
    return nullptr;
  }
  if (!parseBlock(stmt->body))
    return nullptr;
  return stmt;
}

ast::StmtPtr Parser::parsePipeline() {
  auto stmt = std::make_unique<ast::PipelineStmt>(curLoc());
  consume();
  if (!expect(TokenKind::LParen, "after 'pipeline'") ||
      !expectWord("unit", "in 'pipeline(unit = BYTES)'") ||
      !expect(TokenKind::Assign, "after 'unit'") ||
      !(stmt->unit = parseExpr()) ||
      !expect(TokenKind::RParen, "after the pipeline unit") ||
      !parseBlock(stmt->body))
    return nullptr;
  return stmt;
}

ast::StmtPtr Parser::parseReturn() {
  ast::Loc loc = curLoc();
  consume();
  ast::ExprPtr value;
  if (!cur().is(TokenKind::Semi) && !(value = parseExpr()))
    return nullptr;
  if (!expect(TokenKind::Semi, "after the 'return' statement"))
    return nullptr;
  return std::make_unique<ast::ReturnStmt>(loc, std::move(value));
}

ast::StmtPtr Parser::parseExprStmt() {
  ast::Loc loc = curLoc();
  ast::ExprPtr expr = parseExpr();
  if (!expr)
    return nullptr;
  if (!llvm::isa<ast::CallExpr, ast::MethodCallExpr>(expr.get())) {
    error(loc, "expected a statement: only calls and channel operations "
               "can stand alone");
    return nullptr;
  }
  if (!expect(TokenKind::Semi, "after the statement"))
    return nullptr;
  return std::make_unique<ast::ExprStmt>(loc, std::move(expr));
}

std::unique_ptr<ast::SourceFile> mscclc::parseSourceFile(llvm::StringRef buffer,
                                                         llvm::StringRef path,
                                                         DiagReporter &diag) {
  mlir::StringAttr file = mlir::StringAttr::get(&diag.getContext(), path);
  std::vector<Token> toks = lex(buffer, file, diag);
  return Parser(std::move(toks), file, diag).parseFile(path);
}
