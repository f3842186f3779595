//===- Sema.h - Static checks on a parsed module ---------------*- C++ -*-===//
//
// What can be checked without evaluating: every name and function resolves
// (also in branches that a given rank count never takes), no redefinitions,
// arities of calls and channel operations, where `return`, `scratch`,
// `except` and ranges may appear, the algorithm header's options. Types of
// values (integer, buffer, chunk, channel) are checked during evaluation,
// since a `let` may hold any of them.
//
//===----------------------------------------------------------------------===//
#ifndef MSCCLC_FRONTEND_SEMA_H
#define MSCCLC_FRONTEND_SEMA_H

#include "mscclc/Frontend/AST.h"
#include "mscclc/Frontend/Diagnostics.h"

namespace mscclc {

/// Checks `module`; returns false after reporting errors through `diag`.
bool checkModule(const ast::Module &module, DiagReporter &diag);

/// The main file's algorithm (the checks guarantee there is exactly one).
const ast::AlgorithmDecl *findAlgorithm(const ast::Module &module);

} // namespace mscclc

#endif // MSCCLC_FRONTEND_SEMA_H
