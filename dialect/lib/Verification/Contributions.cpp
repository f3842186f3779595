//===- Contributions.cpp - Multisets of (origin rank, input chunk) --------===//

#include "Contributions.h"

#include <algorithm>

using namespace mscl::verify;

Contributions Contributions::sum(llvm::ArrayRef<const Contributions *> parts) {
  Contributions result;
  if (parts.size() == 1) {
    result.entries = parts.front()->entries;
    return result;
  }
  size_t total = 0;
  for (const Contributions *part : parts)
    total += part->entries.size();
  llvm::SmallVector<Entry, 16> all;
  all.reserve(total);
  for (const Contributions *part : parts)
    all.append(part->entries.begin(), part->entries.end());
  std::sort(all.begin(), all.end());
  for (const Entry &entry : all) {
    if (!result.entries.empty() && result.entries.back().first == entry.first) {
      // Uninitialised data stays uninitialised however often it is added.
      if (entry.first != kUninitialised)
        result.entries.back().second += entry.second;
      continue;
    }
    result.entries.push_back(entry);
  }
  return result;
}
