//===- ParseExpr.cpp - Expressions of .mscl -------------------------------===//
//
// Binary operators use precedence climbing. Left-associative chains are
// built in a loop, which keeps the C++ stack flat but would let `1+1+...+1`
// grow an arbitrarily deep tree for the later (recursive) stages; so each
// link of a chain counts as a nesting level, like a parenthesis does.
//
//===----------------------------------------------------------------------===//

#include "ParserImpl.h"

#include "mscclc/Frontend/Parser.h"

using namespace mscclc;
using namespace mscclc::detail;

namespace {

/// Binding strength of a binary operator token, 0 for other tokens.
int precedence(TokenKind kind) {
  switch (kind) {
  case TokenKind::PipePipe:
    return 1;
  case TokenKind::AmpAmp:
    return 2;
  case TokenKind::EqEq:
  case TokenKind::NotEq:
    return 3;
  case TokenKind::Less:
  case TokenKind::LessEq:
  case TokenKind::Greater:
  case TokenKind::GreaterEq:
    return 4;
  case TokenKind::Plus:
  case TokenKind::Minus:
    return 5;
  case TokenKind::Star:
  case TokenKind::Slash:
  case TokenKind::Percent:
    return 6;
  default:
    return 0;
  }
}

ast::BinaryOp binaryOp(TokenKind kind) {
  switch (kind) {
  case TokenKind::PipePipe:
    return ast::BinaryOp::Or;
  case TokenKind::AmpAmp:
    return ast::BinaryOp::And;
  case TokenKind::EqEq:
    return ast::BinaryOp::Eq;
  case TokenKind::NotEq:
    return ast::BinaryOp::Ne;
  case TokenKind::Less:
    return ast::BinaryOp::Lt;
  case TokenKind::LessEq:
    return ast::BinaryOp::Le;
  case TokenKind::Greater:
    return ast::BinaryOp::Gt;
  case TokenKind::GreaterEq:
    return ast::BinaryOp::Ge;
  case TokenKind::Plus:
    return ast::BinaryOp::Add;
  case TokenKind::Minus:
    return ast::BinaryOp::Sub;
  case TokenKind::Star:
    return ast::BinaryOp::Mul;
  case TokenKind::Slash:
    return ast::BinaryOp::Div;
  default:
    return ast::BinaryOp::Rem;
  }
}

} // namespace

ast::ExprPtr Parser::parseExpr() { return parseBinary(1); }

ast::ExprPtr Parser::parseBinary(int minPrec) {
  ast::ExprPtr lhs = parseUnary();
  if (!lhs)
    return nullptr;
  std::vector<std::unique_ptr<NestingGuard>> chain;
  while (true) {
    int prec = precedence(cur().kind);
    if (prec == 0 || prec < minPrec)
      return lhs;
    chain.push_back(std::make_unique<NestingGuard>(*this));
    if (!chain.back()->ok)
      return nullptr;
    ast::Loc opLoc = curLoc();
    ast::BinaryOp op = binaryOp(cur().kind);
    consume();
    ast::ExprPtr rhs = parseBinary(prec + 1);
    if (!rhs)
      return nullptr;
    lhs = std::make_unique<ast::BinaryExpr>(opLoc, op, std::move(lhs),
                                            std::move(rhs));
  }
}

ast::ExprPtr Parser::parseUnary() {
  NestingGuard guard(*this);
  if (!guard.ok)
    return nullptr;
  if (cur().is(TokenKind::Minus) || cur().is(TokenKind::Bang)) {
    ast::Loc loc = curLoc();
    ast::UnaryOp op =
        cur().is(TokenKind::Minus) ? ast::UnaryOp::Neg : ast::UnaryOp::Not;
    consume();
    ast::ExprPtr operand = parseUnary();
    if (!operand)
      return nullptr;
    return std::make_unique<ast::UnaryExpr>(loc, op, std::move(operand));
  }
  return parsePostfix();
}

ast::ExprPtr Parser::parsePostfix() {
  ast::ExprPtr expr = parsePrimary();
  if (!expr)
    return nullptr;
  // Method chains (`c.signal().wait()`) are not meaningful, but parsing them
  // in a loop keeps error messages about the receiver's type, not syntax.
  std::vector<std::unique_ptr<NestingGuard>> chain;
  while (cur().is(TokenKind::Dot)) {
    chain.push_back(std::make_unique<NestingGuard>(*this));
    if (!chain.back()->ok)
      return nullptr;
    consume();
    if (!cur().is(TokenKind::Ident)) {
      errorAtCur("expected an operation name after '.', found " + found());
      return nullptr;
    }
    ast::Loc loc = curLoc();
    std::string method = cur().text.str();
    consume();
    if (!cur().is(TokenKind::LParen)) {
      errorAtCur("expected '(' after '." + method + "', found " + found());
      return nullptr;
    }
    std::vector<ast::ExprPtr> args;
    if (!parseArgs(args))
      return nullptr;
    expr = std::make_unique<ast::MethodCallExpr>(loc, std::move(expr), method,
                                                 std::move(args));
  }
  return expr;
}

ast::ExprPtr Parser::parseParenExpr() {
  consume(); // (
  ast::ExprPtr inner = parseExpr();
  if (!inner || !expect(TokenKind::RParen, "to close the parenthesis"))
    return nullptr;
  return inner;
}

ast::ExprPtr Parser::parsePrimary() {
  const Token &tok = cur();
  ast::Loc loc = curLoc();
  switch (tok.kind) {
  case TokenKind::Int: {
    int64_t value = tok.intValue;
    consume();
    return std::make_unique<ast::IntExpr>(loc, value);
  }
  case TokenKind::LParen:
    return parseParenExpr();
  case TokenKind::Ident: {
    Token nameTok = tok;
    consume();
    if (cur().is(TokenKind::LParen)) {
      std::vector<ast::ExprPtr> args;
      if (!parseArgs(args))
        return nullptr;
      return std::make_unique<ast::CallExpr>(loc, nameTok.text.str(),
                                             std::move(args));
    }
    if (consumeIf(TokenKind::At)) {
      ast::ExprPtr rank = parseRankAtom();
      if (!rank)
        return nullptr;
      return parseChunk(nameTok, std::move(rank));
    }
    if (cur().is(TokenKind::LBracket))
      return parseChunk(nameTok, nullptr);
    return std::make_unique<ast::NameExpr>(loc, nameTok.text.str());
  }
  default:
    errorAtCur("expected an expression, found " + found());
    return nullptr;
  }
}

ast::ExprPtr Parser::parseRankAtom() {
  NestingGuard guard(*this);
  if (!guard.ok)
    return nullptr;
  ast::Loc loc = curLoc();
  switch (cur().kind) {
  case TokenKind::Int: {
    int64_t value = cur().intValue;
    consume();
    return std::make_unique<ast::IntExpr>(loc, value);
  }
  case TokenKind::LParen:
    return parseParenExpr();
  case TokenKind::Ident: {
    std::string name = cur().text.str();
    consume();
    if (!cur().is(TokenKind::LParen))
      return std::make_unique<ast::NameExpr>(loc, name);
    std::vector<ast::ExprPtr> args;
    if (!parseArgs(args))
      return nullptr;
    return std::make_unique<ast::CallExpr>(loc, name, std::move(args));
  }
  default:
    errorAtCur("expected a rank after '@' (a number, a name, a call or a "
               "parenthesized expression), found " +
               found());
    return nullptr;
  }
}

ast::ExprPtr Parser::parseChunk(const Token &nameTok, ast::ExprPtr rank) {
  if (!expect(TokenKind::LBracket, "after the rank of a chunk reference"))
    return nullptr;
  ast::ExprPtr first = parseExpr();
  if (!first)
    return nullptr;
  ast::ExprPtr last;
  if (consumeIf(TokenKind::DotDot) && !(last = parseExpr()))
    return nullptr;
  if (!expect(TokenKind::RBracket, "after the chunk index"))
    return nullptr;
  return std::make_unique<ast::ChunkExpr>(locOf(nameTok), nameTok.text.str(),
                                          std::move(rank), std::move(first),
                                          std::move(last));
}

bool Parser::parseArgs(std::vector<ast::ExprPtr> &args) {
  consume(); // (
  if (consumeIf(TokenKind::RParen))
    return true;
  do {
    ast::ExprPtr arg = parseArg();
    if (!arg)
      return false;
    args.push_back(std::move(arg));
  } while (consumeIf(TokenKind::Comma));
  return expect(TokenKind::RParen, "after the arguments");
}

ast::ExprPtr Parser::parseArg() {
  ast::Loc loc = curLoc();
  ast::ExprPtr arg = parseExpr();
  if (!arg)
    return nullptr;
  if (consumeIf(TokenKind::DotDot)) {
    ast::ExprPtr hi = parseExpr();
    if (!hi)
      return nullptr;
    return std::make_unique<ast::RangeExpr>(loc, std::move(arg), std::move(hi));
  }
  if (cur().is(TokenKind::KwExcept)) {
    ast::Loc exceptLoc = curLoc();
    consume();
    ast::ExprPtr excluded = parseExpr();
    if (!excluded)
      return nullptr;
    return std::make_unique<ast::ExceptExpr>(exceptLoc, std::move(arg),
                                             std::move(excluded));
  }
  return arg;
}
