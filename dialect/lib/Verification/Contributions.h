//===- Contributions.h - Multisets of (origin rank, input chunk) ----------===//
//
// The symbolic value of a chunk in mscl-check-collective: which input chunks
// of which ranks were combined into it, with multiplicity. A sorted vector of
// (key, count) pairs; keys are `rank * inputChunks + chunk`, and one key
// stands for uninitialised data (a scratch or output chunk read before
// anything wrote it).
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
  static Contributions single(uint32_t key) {
    Contributions c;
    c.entries.push_back({key, 1});
    return c;
  }
  /// The multiset sum of `parts`.
  static Contributions sum(llvm::ArrayRef<const Contributions *> parts);

  llvm::ArrayRef<Entry> getEntries() const { return entries; }
  bool hasUninitialised() const {
    return !entries.empty() && entries.back().first == kUninitialised;
  }
  bool operator==(const Contributions &other) const {
    return entries == other.entries;
  }

private:
  llvm::SmallVector<Entry, 1> entries; // sorted by key
};

} // namespace mscl::verify

#endif // MSCL_LIB_VERIFICATION_CONTRIBUTIONS_H
