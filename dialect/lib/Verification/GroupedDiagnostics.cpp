//===- GroupedDiagnostics.cpp - One report per mistake in a rank loop -----===//

#include "GroupedDiagnostics.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <cctype>
#include <thread>

using namespace mlir;
using namespace mscl::verify;

GroupedDiagnostics::GroupedDiagnostics(MLIRContext *context)
    : context(context) {
  // Programs of one module are checked on threads of their own, each with
  // its GroupedDiagnostics on the one context: hold only this thread's.
  handler = context->getDiagEngine().registerHandler(
      [this, owner = std::this_thread::get_id()](Diagnostic &d) {
        if (std::this_thread::get_id() != owner)
          return failure(); // the next handler's
        held.push_back(std::move(d));
        return success();
      });
}

/// The location and the text with every number replaced: what two reports
/// of one mistake for different ranks share.
static std::string groupKey(const Diagnostic &diag) {
  std::string key;
  llvm::raw_string_ostream os(key);
  diag.getLocation().print(os);
  os << '|' << static_cast<int>(diag.getSeverity()) << '|';
  std::string text = diag.str();
  for (size_t i = 0; i < text.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) {
      os << text[i];
      continue;
    }
    os << '#';
    while (i + 1 < text.size() &&
           std::isdigit(static_cast<unsigned char>(text[i + 1])))
      ++i;
  }
  return key;
}

/// The first rank a message names ("rank 3" or "<rank 3, ...>"), or -1.
static long firstRank(const Diagnostic &diag) {
  std::string text = diag.str();
  size_t at = text.find("rank ");
  if (at == std::string::npos)
    return -1;
  const char *digits = text.c_str() + at + 5;
  if (!std::isdigit(static_cast<unsigned char>(*digits)))
    return -1;
  return std::strtol(digits, nullptr, 10);
}

GroupedDiagnostics::~GroupedDiagnostics() {
  context->getDiagEngine().eraseHandler(handler);
  // Only errors at an operation are grouped (not the program-level
  // summaries); notes travel with their error.
  llvm::StringMap<size_t> firstOf;
  std::vector<std::vector<long>> othersOf(held.size());
  std::vector<bool> keep(held.size(), true);
  for (size_t i = 0; i < held.size(); ++i) {
    if (held[i].getSeverity() != DiagnosticSeverity::Error ||
        isa<UnknownLoc>(held[i].getLocation()))
      continue;
    auto [it, inserted] = firstOf.try_emplace(groupKey(held[i]), i);
    if (inserted)
      continue;
    keep[i] = false;
    othersOf[it->second].push_back(firstRank(held[i]));
  }
  for (size_t i = 0; i < held.size(); ++i) {
    if (!keep[i])
      continue;
    Diagnostic &diag = held[i];
    if (!othersOf[i].empty()) {
      size_t more = othersOf[i].size();
      std::vector<long> &ranks = othersOf[i];
      llvm::sort(ranks);
      ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
      std::string note;
      llvm::raw_string_ostream os(note);
      os << "reported once: the same error occurs here " << more
         << " more time(s)";
      if (ranks.front() >= 0) {
        os << " (for rank";
        if (ranks.size() > 1)
          os << "s";
        os << " ";
        llvm::interleaveComma(ranks, os);
        os << ")";
      }
      diag.attachNote(diag.getLocation()) << note;
    }
    context->getDiagEngine().emit(std::move(diag));
  }
}
