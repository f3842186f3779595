//===- Lexer.h - Tokens of .mscl source files ------------------*- C++ -*-===//
//
// The lexer turns a whole buffer into tokens up front (source files are
// small, and a token vector gives the parser free lookahead). Bad input
// (stray bytes, unterminated comments or strings, oversized integers) is
// reported and replaced by a harmless token so the parser can go on.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_FRONTEND_LEXER_H
#define MSCCLC_FRONTEND_LEXER_H

#include "mscclc/Frontend/Diagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mscclc {

enum class TokenKind {
  Eof,
  Ident,
  Int,
  String,
  // Keywords. `rank`, `tb`, `tbs`, `step` and `unit` are only special where
  // the grammar expects them, so they stay usable as names.
  KwAlgorithm,
  KwElse,
  KwExcept,
  KwFn,
  KwFor,
  KwIf,
  KwImport,
  KwIn,
  KwLet,
  KwOn,
  KwParam,
  KwPipeline,
  KwRequire,
  KwReturn,
  KwScratch,
  // Punctuation and operators.
  LParen,
  RParen,
  LBrace,
  RBrace,
  LBracket,
  RBracket,
  Comma,
  Semi,
  Colon,
  Dot,
  DotDot,
  At,
  Assign,
  EqEq,
  NotEq,
  Less,
  LessEq,
  Greater,
  GreaterEq,
  Plus,
  Minus,
  Star,
  Slash,
  Percent,
  Bang,
  AmpAmp,
  PipePipe,
};

/// A human-readable name for diagnostics: "';'", "identifier", ...
llvm::StringRef describe(TokenKind kind);

struct Token {
  TokenKind kind = TokenKind::Eof;
  llvm::StringRef text; // the spelling in the buffer
  int64_t intValue = 0; // Int: the value with its suffix applied
  std::string strValue; // String: the contents with escapes decoded
  unsigned line = 1, col = 1;

  bool is(TokenKind k) const { return kind == k; }
  /// True for an identifier spelled `word` (contextual keywords).
  bool isWord(llvm::StringRef word) const {
    return kind == TokenKind::Ident && text == word;
  }
};

/// Splits `buffer` into tokens ending with one Eof token. Errors are reported
/// through `diag` at locations in `filename`. Never fails: bad input yields
/// diagnostics and the best tokens it can.
std::vector<Token> lex(llvm::StringRef buffer, mlir::StringAttr filename,
                       DiagReporter &diag);

} // namespace mscclc

#endif // MSCCLC_FRONTEND_LEXER_H
