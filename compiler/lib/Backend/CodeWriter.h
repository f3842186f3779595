//===- CodeWriter.h - Indented C++ text for the CUDA emitter ---*- C++ -*-===//
//
// The generated CUDA is meant to be read, so every line goes through one
// writer that keeps the indentation; scopes open and close in pairs.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_LIB_BACKEND_CODEWRITER_H
#define MSCCLC_LIB_BACKEND_CODEWRITER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mscclc {
namespace backend {

class CodeWriter {
public:
  explicit CodeWriter(unsigned indent = 0) : depth(indent) {}

  /// Starts a line at the current indentation; the caller ends it.
  llvm::raw_ostream &line() {
    os.indent(depth);
    return os;
  }
  /// Continues the current line.
  llvm::raw_ostream &rest() { return os; }

  /// `header {` (with an optional comment after the brace) and one level
  /// deeper.
  void open(const llvm::Twine &header = "", llvm::StringRef comment = "") {
    llvm::raw_ostream &os = line();
    if (!header.isTriviallyEmpty())
      os << header << " ";
    os << "{";
    if (!comment.empty())
      os << " // " << comment;
    os << "\n";
    depth += 2;
  }
  /// One level shallower and `}` (with an optional trailing comment).
  void close(const llvm::Twine &trailer = "") {
    depth -= 2;
    line() << "}" << trailer << "\n";
  }
  void indent() { depth += 2; }
  void dedent() { depth -= 2; }

  const std::string &text() const { return buffer; }

private:
  std::string buffer;
  llvm::raw_string_ostream os{buffer};
  unsigned depth;
};

} // namespace backend
} // namespace mscclc

#endif // MSCCLC_LIB_BACKEND_CODEWRITER_H
