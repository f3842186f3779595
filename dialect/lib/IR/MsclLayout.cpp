//===- MsclLayout.cpp - Chunk sizes and last elements, from Layout.h -----===//

#include "mscl/IR/MsclLayout.h"

#include "mscclc/device/Layout.h"

#include "llvm/ADT/bit.h"

#include <cassert>

using namespace mscl;

Residues::Residues(int64_t k, bool all) : words((k + 63) / 64, 0) {
  if (!all)
    return;
  for (int64_t r = 0; r < k; ++r)
    set(r);
}

Residues &Residues::operator&=(const Residues &other) {
  assert(words.size() == other.words.size() && "residues of one K");
  for (size_t i = 0; i < words.size(); ++i)
    words[i] &= other.words[i];
  return *this;
}

Residues &Residues::operator|=(const Residues &other) {
  assert(words.size() == other.words.size() && "residues of one K");
  for (size_t i = 0; i < words.size(); ++i)
    words[i] |= other.words[i];
  return *this;
}

Residues Residues::minus(const Residues &other) const {
  Residues out = *this;
  for (size_t i = 0; i < words.size(); ++i)
    out.words[i] &= ~other.words[i];
  return out;
}

bool Residues::empty() const {
  for (uint64_t w : words)
    if (w)
      return false;
  return true;
}

std::optional<int64_t> Residues::first() const {
  for (size_t i = 0; i < words.size(); ++i)
    if (words[i])
      return int64_t(i * 64) + llvm::countr_zero(words[i]);
  return std::nullopt;
}

ChunkLayout::ChunkLayout(int64_t chunks)
    : k(chunks < 1 ? 1 : chunks), scratchLast(k) {
  // At a count r < K every chunk holds 0 or 1 element: the one it holds
  // is its last element at every count c = q*K + r.
  userLast.assign(k, Residues(k));
  for (int64_t r = 0; r < k; ++r) {
    if (elems(false, 0, r) == 1)
      scratchLast.set(r);
    for (int64_t j = 0; j < k; ++j)
      if (elems(true, j, r) == 1)
        userLast[j].set(r);
  }
}

uint64_t ChunkLayout::begin(bool user, int64_t index, uint64_t count) const {
  if (user)
    return mscclc_chunk_begin(index, count, k);
  return index * mscclc_scratch_chunk_elems(count, k);
}

uint64_t ChunkLayout::elems(bool user, int64_t index, uint64_t count) const {
  if (user)
    return mscclc_chunk_begin(index + 1, count, k) -
           mscclc_chunk_begin(index, count, k);
  return mscclc_scratch_chunk_elems(count, k);
}

bool ChunkLayout::sameSizes(bool userA, int64_t indexA, bool userB,
                            int64_t indexB, int64_t runLength) const {
  if (!userA && !userB)
    return true;
  for (int64_t j = 0; j < runLength; ++j)
    if (lastElement(userA, indexA + j) != lastElement(userB, indexB + j))
      return false;
  return true;
}
