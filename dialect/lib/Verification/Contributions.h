//===- Contributions.h - Multisets of (origin rank, input chunk) ----------===//
//
// What the collective's postcondition is stated in: which input chunks of
// which ranks were combined into a chunk, with multiplicity. A sorted
// vector of (key, count) pairs; keys are `rank * inputChunks + chunk`, and
// one key stands for uninitialised data (a scratch or output chunk read
// before anything wrote it). Computed from a chunk's expression
// (ExprPool::contributions).
//
//===----------------------------------------------------------------------===//
#ifndef MSCL_LIB_VERIFICATION_CONTRIBUTIONS_H
#define MSCL_LIB_VERIFICATION_CONTRIBUTIONS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <utility>

namespace mscl::verify {

class Contributions {
public:
  using Entry = std::pair<uint32_t, uint32_t>; // key, count
  static constexpr uint32_t kUninitialised = UINT32_MAX;

  Contributions() = default;
  /// From (key, count) entries sorted by key.
  static Contributions fromEntries(llvm::ArrayRef<Entry> sorted) {
    Contributions c;
    c.entries.assign(sorted.begin(), sorted.end());
    return c;
  }

  llvm::ArrayRef<Entry> getEntries() const { return entries; }
  bool operator==(const Contributions &other) const {
    return entries == other.entries;
  }

private:
  llvm::SmallVector<Entry, 1> entries; // sorted by key
};

} // namespace mscl::verify

#endif // MSCL_LIB_VERIFICATION_CONTRIBUTIONS_H
