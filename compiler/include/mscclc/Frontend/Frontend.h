//===- Frontend.h - Entry points of the .mscl frontend ---------*- C++ -*-===//
//
// The driver calls, in order: parseProgram (lex, parse, load imports, check
// names), then dumpAST for `--emit=ast` or evaluateProgram to get the
// per-rank Program that MLIRGen turns into the `mscl` dialect. All errors go
// through the MLIRContext's diagnostic engine at FileLineColLoc locations
// whose filename is the SourceMgr buffer identifier, so a
// SourceMgrDiagnosticHandler prints them with the source line and a caret.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_FRONTEND_FRONTEND_H
#define MSCCLC_FRONTEND_FRONTEND_H

#include "mscclc/Frontend/AST.h"
#include "mscclc/Frontend/Program.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace llvm {
class SourceMgr;
class raw_ostream;
} // namespace llvm

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace mscclc {

/// The compile-time values a program is evaluated for (language.md,
/// "Built-in compile-time values").
struct FrontendOptions {
  int64_t ranks = 8;
  std::optional<int64_t> gpusPerNode; // default: all ranks on one node
  int64_t instances = 1;
  std::vector<std::pair<std::string, int64_t>> defines; // -D name=value
};

/// Parses `sourceMgr`'s main buffer and, recursively, the files it imports
/// (loaded into the same SourceMgr, paths relative to the importing file),
/// then checks names, arities and declaration rules. Errors are emitted
/// through `ctx`'s diagnostic engine. Returns nullptr after errors.
std::unique_ptr<ast::Module> parseProgram(llvm::SourceMgr &sourceMgr,
                                          mlir::MLIRContext &ctx);

/// Prints the module as an indented tree, one node per line with its
/// line:col, for `--emit=ast`.
void dumpAST(const ast::Module &module, llvm::raw_ostream &os);

/// Evaluates the main file's algorithm for `opts`: runs every loop, call and
/// condition at compile time and returns the per-rank, per-thread-block
/// program. Returns std::nullopt after errors.
std::optional<Program> evaluateProgram(const ast::Module &module,
                                       const FrontendOptions &opts,
                                       mlir::MLIRContext &ctx);

/// Prints an evaluated program in a stable, line-per-operation text form
/// (for tests and debugging; not the MLIR form).
void printProgram(const Program &program, llvm::raw_ostream &os);

/// Names used in diagnostics and printed forms.
llvm::StringRef stringifyCollective(Collective kind);
llvm::StringRef stringifyOpKind(OpKind kind);

} // namespace mscclc

#endif // MSCCLC_FRONTEND_FRONTEND_H
