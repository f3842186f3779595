//===- Parser.h - Recursive-descent parser for .mscl -----------*- C++ -*-===//
//
// Parses one source file into an ast::SourceFile. The parser recovers from
// errors by skipping to the end of the statement (`;` or the enclosing `}`)
// or to the next top-level declaration, so one run reports several errors;
// nesting deeper than `kMaxNesting` is an error rather than a stack overflow.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_FRONTEND_PARSER_H
#define MSCCLC_FRONTEND_PARSER_H

#include "mscclc/Frontend/AST.h"
#include "mscclc/Frontend/Diagnostics.h"

#include <memory>

namespace mscclc {

/// Deepest nesting of blocks and expressions the parser accepts.
constexpr unsigned kMaxNesting = 256;

/// Parses `buffer`, whose locations are reported in file `path`. Always
/// returns a file (possibly partial); `diag.errorCount()` tells whether the
/// parse succeeded.
std::unique_ptr<ast::SourceFile> parseSourceFile(llvm::StringRef buffer,
                                                 llvm::StringRef path,
                                                 DiagReporter &diag);

} // namespace mscclc

#endif // MSCCLC_FRONTEND_PARSER_H
