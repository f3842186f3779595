//===- Lexer.cpp - Tokens of .mscl source files ---------------------------===//

#include "mscclc/Frontend/Lexer.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>

using namespace mscclc;

llvm::StringRef mscclc::describe(TokenKind kind) {
  switch (kind) {
  case TokenKind::Eof:
    return "end of file";
  case TokenKind::Ident:
    return "identifier";
  case TokenKind::Int:
    return "integer";
  case TokenKind::String:
    return "string";
  case TokenKind::KwAlgorithm:
    return "'algorithm'";
  case TokenKind::KwElse:
    return "'else'";
  case TokenKind::KwExcept:
    return "'except'";
  case TokenKind::KwFn:
    return "'fn'";
  case TokenKind::KwFor:
    return "'for'";
  case TokenKind::KwIf:
    return "'if'";
  case TokenKind::KwImport:
    return "'import'";
  case TokenKind::KwIn:
    return "'in'";
  case TokenKind::KwLet:
    return "'let'";
  case TokenKind::KwOn:
    return "'on'";
  case TokenKind::KwParam:
    return "'param'";
  case TokenKind::KwPipeline:
    return "'pipeline'";
  case TokenKind::KwRequire:
    return "'require'";
  case TokenKind::KwReturn:
    return "'return'";
  case TokenKind::KwScratch:
    return "'scratch'";
  case TokenKind::LParen:
    return "'('";
  case TokenKind::RParen:
    return "')'";
  case TokenKind::LBrace:
    return "'{'";
  case TokenKind::RBrace:
    return "'}'";
  case TokenKind::LBracket:
    return "'['";
  case TokenKind::RBracket:
    return "']'";
  case TokenKind::Comma:
    return "','";
  case TokenKind::Semi:
    return "';'";
  case TokenKind::Colon:
    return "':'";
  case TokenKind::Dot:
    return "'.'";
  case TokenKind::DotDot:
    return "'..'";
  case TokenKind::At:
    return "'@'";
  case TokenKind::Assign:
    return "'='";
  case TokenKind::EqEq:
    return "'=='";
  case TokenKind::NotEq:
    return "'!='";
  case TokenKind::Less:
    return "'<'";
  case TokenKind::LessEq:
    return "'<='";
  case TokenKind::Greater:
    return "'>'";
  case TokenKind::GreaterEq:
    return "'>='";
  case TokenKind::Plus:
    return "'+'";
  case TokenKind::Minus:
    return "'-'";
  case TokenKind::Star:
    return "'*'";
  case TokenKind::Slash:
    return "'/'";
  case TokenKind::Percent:
    return "'%'";
  case TokenKind::Bang:
    return "'!'";
  case TokenKind::AmpAmp:
    return "'&&'";
  case TokenKind::PipePipe:
    return "'||'";
  }
  return "token";
}

namespace {

bool isIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isIdentChar(char c) { return isIdentStart(c) || isDigit(c); }
int hexValue(char c) {
  if (isDigit(c))
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/// True for a byte that may begin a token or whitespace; where a run of
/// stray bytes ends.
bool startsToken(char c) {
  return isIdentChar(c) ||
         llvm::StringRef(" \t\n\r\f\v\"(){}[],;:@+-*/%.=!<>").contains(c);
}

/// Quotes a byte for a message: printable ASCII as is, the rest as \xNN, so
/// binary garbage never ends up raw in a diagnostic.
std::string quoteByte(char c) {
  std::string s;
  llvm::raw_string_ostream os(s);
  auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f)
    os << "'" << c << "'";
  else
    os << "'\\x" << llvm::format_hex_no_prefix(u, 2) << "'";
  return s;
}

class Lexer {
public:
  Lexer(llvm::StringRef buf, mlir::StringAttr file, DiagReporter &diag)
      : buf(buf), file(file), diag(diag) {}

  std::vector<Token> run();

private:
  char at(size_t i) const { return i < buf.size() ? buf[i] : '\0'; }
  bool atEnd() const { return pos >= buf.size(); }
  /// Moves past one byte, keeping line and column up to date.
  void advance() {
    if (buf[pos] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
    ++pos;
  }
  mlir::Location locAt(unsigned l, unsigned c) const {
    return mlir::FileLineColLoc::get(file, l, c);
  }
  void error(unsigned l, unsigned c, const llvm::Twine &msg) {
    diag.error(locAt(l, c), msg);
  }

  /// Skips whitespace and comments; false on an unterminated block comment
  /// (which swallows the rest of the file).
  bool skipTrivia();
  void lexNumber(Token &tok);
  void lexString(Token &tok);
  bool lexPunct(Token &tok);

  llvm::StringRef buf;
  mlir::StringAttr file;
  DiagReporter &diag;
  size_t pos = 0;
  unsigned line = 1, col = 1;
};

} // namespace

bool Lexer::skipTrivia() {
  while (!atEnd()) {
    char c = buf[pos];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
        c == '\v') {
      advance();
    } else if (c == '/' && at(pos + 1) == '/') {
      while (!atEnd() && buf[pos] != '\n')
        advance();
    } else if (c == '/' && at(pos + 1) == '*') {
      unsigned l = line, cl = col;
      advance();
      advance();
      while (!atEnd() && !(buf[pos] == '*' && at(pos + 1) == '/'))
        advance();
      if (atEnd()) {
        error(l, cl, "unterminated block comment");
        return false;
      }
      advance();
      advance();
    } else {
      return true;
    }
  }
  return true;
}

void Lexer::lexNumber(Token &tok) {
  size_t start = pos;
  bool hex = buf[pos] == '0' && (at(pos + 1) == 'x' || at(pos + 1) == 'X');
  uint64_t value = 0;
  bool overflow = false, bad = false;
  // The largest literal is INT64_MAX: negative numbers are a unary minus
  // applied to a literal, as in C.
  const uint64_t limit = std::numeric_limits<int64_t>::max();
  auto accumulate = [&](unsigned base, unsigned digit) {
    if (value > (limit - digit) / base)
      overflow = true;
    else
      value = value * base + digit;
  };
  if (hex) {
    advance();
    advance();
    size_t digits = 0;
    for (int d; !atEnd() && (d = hexValue(buf[pos])) >= 0; advance(), ++digits)
      accumulate(16, d);
    bad = digits == 0;
  } else {
    for (; !atEnd() && isDigit(buf[pos]); advance())
      accumulate(10, buf[pos] - '0');
  }
  uint64_t scale = 1;
  if (!atEnd() && (buf[pos] == 'K' || buf[pos] == 'M' || buf[pos] == 'G') &&
      !isIdentChar(at(pos + 1))) {
    scale = buf[pos] == 'K'   ? 1ull << 10
            : buf[pos] == 'M' ? 1ull << 20
                              : 1ull << 30;
    advance();
  }
  // A literal runs into letters or digits only by mistake (`12ab`, `0x`):
  // take the whole word so the error names it and the parser sees one token.
  while (!atEnd() && isIdentChar(buf[pos])) {
    bad = true;
    advance();
  }
  tok.kind = TokenKind::Int;
  tok.text = buf.slice(start, pos);
  if (bad) {
    error(tok.line, tok.col, "invalid integer literal '" + tok.text + "'");
    return;
  }
  if (!overflow && value > limit / scale)
    overflow = true;
  if (overflow) {
    error(tok.line, tok.col,
          "integer literal '" + tok.text + "' does not fit in 64 bits");
    return;
  }
  tok.intValue = static_cast<int64_t>(value * scale);
}

void Lexer::lexString(Token &tok) {
  size_t start = pos;
  advance(); // opening quote
  tok.kind = TokenKind::String;
  while (true) {
    if (atEnd() || buf[pos] == '\n') {
      error(tok.line, tok.col, "unterminated string literal");
      tok.text = buf.slice(start, pos);
      return;
    }
    char c = buf[pos];
    if (c == '"') {
      advance();
      break;
    }
    if (c == '\\') {
      unsigned l = line, cl = col;
      advance();
      char e = at(pos);
      if (!atEnd() && e != '\n')
        advance();
      switch (e) {
      case 'n':
        tok.strValue += '\n';
        break;
      case 't':
        tok.strValue += '\t';
        break;
      case '\\':
      case '"':
        tok.strValue += e;
        break;
      default:
        error(l, cl, "unknown escape sequence in string literal");
        break;
      }
      continue;
    }
    tok.strValue += c;
    advance();
  }
  tok.text = buf.slice(start, pos);
}

bool Lexer::lexPunct(Token &tok) {
  char c = buf[pos], n = at(pos + 1);
  auto two = [&](TokenKind kind) {
    tok.kind = kind;
    tok.text = buf.substr(pos, 2);
    advance();
    advance();
    return true;
  };
  auto one = [&](TokenKind kind) {
    tok.kind = kind;
    tok.text = buf.substr(pos, 1);
    advance();
    return true;
  };
  switch (c) {
  case '(':
    return one(TokenKind::LParen);
  case ')':
    return one(TokenKind::RParen);
  case '{':
    return one(TokenKind::LBrace);
  case '}':
    return one(TokenKind::RBrace);
  case '[':
    return one(TokenKind::LBracket);
  case ']':
    return one(TokenKind::RBracket);
  case ',':
    return one(TokenKind::Comma);
  case ';':
    return one(TokenKind::Semi);
  case ':':
    return one(TokenKind::Colon);
  case '@':
    return one(TokenKind::At);
  case '+':
    return one(TokenKind::Plus);
  case '-':
    return one(TokenKind::Minus);
  case '*':
    return one(TokenKind::Star);
  case '/':
    return one(TokenKind::Slash);
  case '%':
    return one(TokenKind::Percent);
  case '.':
    return n == '.' ? two(TokenKind::DotDot) : one(TokenKind::Dot);
  case '=':
    return n == '=' ? two(TokenKind::EqEq) : one(TokenKind::Assign);
  case '!':
    return n == '=' ? two(TokenKind::NotEq) : one(TokenKind::Bang);
  case '<':
    return n == '=' ? two(TokenKind::LessEq) : one(TokenKind::Less);
  case '>':
    return n == '=' ? two(TokenKind::GreaterEq) : one(TokenKind::Greater);
  case '&':
    if (n == '&')
      return two(TokenKind::AmpAmp);
    break;
  case '|':
    if (n == '|')
      return two(TokenKind::PipePipe);
    break;
  default:
    break;
  }
  return false;
}

std::vector<Token> Lexer::run() {
  std::vector<Token> toks;
  while (!diag.limitReached()) {
    if (!skipTrivia())
      break;
    if (atEnd())
      break;
    Token tok;
    tok.line = line;
    tok.col = col;
    char c = buf[pos];
    if (isIdentStart(c)) {
      size_t start = pos;
      while (!atEnd() && isIdentChar(buf[pos]))
        advance();
      tok.text = buf.slice(start, pos);
      tok.kind = llvm::StringSwitch<TokenKind>(tok.text)
                     .Case("algorithm", TokenKind::KwAlgorithm)
                     .Case("else", TokenKind::KwElse)
                     .Case("except", TokenKind::KwExcept)
                     .Case("fn", TokenKind::KwFn)
                     .Case("for", TokenKind::KwFor)
                     .Case("if", TokenKind::KwIf)
                     .Case("import", TokenKind::KwImport)
                     .Case("in", TokenKind::KwIn)
                     .Case("let", TokenKind::KwLet)
                     .Case("on", TokenKind::KwOn)
                     .Case("param", TokenKind::KwParam)
                     .Case("pipeline", TokenKind::KwPipeline)
                     .Case("require", TokenKind::KwRequire)
                     .Case("return", TokenKind::KwReturn)
                     .Case("scratch", TokenKind::KwScratch)
                     .Default(TokenKind::Ident);
    } else if (isDigit(c)) {
      lexNumber(tok);
    } else if (c == '"') {
      lexString(tok);
    } else if (!lexPunct(tok)) {
      // One error for a whole run of stray bytes: a binary file should not
      // produce one message per byte.
      std::string what = quoteByte(c);
      if (c == '&' || c == '|')
        what += std::string("; did you mean '") + c + c + "'?";
      error(tok.line, tok.col, "unexpected character " + what);
      advance();
      while (!atEnd() && !startsToken(buf[pos]))
        advance();
      continue;
    }
    toks.push_back(std::move(tok));
  }
  Token eof;
  eof.kind = TokenKind::Eof;
  eof.line = line;
  eof.col = col;
  toks.push_back(std::move(eof));
  return toks;
}

std::vector<Token> mscclc::lex(llvm::StringRef buffer,
                               mlir::StringAttr filename, DiagReporter &diag) {
  return Lexer(buffer, filename, diag).run();
}
