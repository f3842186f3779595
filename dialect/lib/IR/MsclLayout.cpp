//===- MsclLayout.cpp - Chunk sizes and last elements, from Layout.h -----===//

#include "mscl/IR/MsclLayout.h"

#include "mscclc/device/Layout.h"

#include "llvm/ADT/bit.h"

#include <algorithm>
#include <cassert>

using namespace mscl;

/// The bits of word `i` that stand for residues (all but in the last).
static uint64_t usedBits(int64_t k, size_t i) {
  int64_t bitsHere = std::min<int64_t>(64, k - int64_t(i) * 64);
  return bitsHere == 64 ? ~uint64_t(0) : (uint64_t(1) << bitsHere) - 1;
}

uint64_t Residues::word(size_t i) const {
  if (!words.empty())
    return words[i];
  return fill ? usedBits(k, i) : 0;
}

void Residues::materialize() {
  if (!words.empty() || k == 0)
    return;
  llvm::SmallVector<uint64_t, 4> bits(numWords());
  for (size_t i = 0; i < bits.size(); ++i)
    bits[i] = word(i);
  words = std::move(bits);
}

void Residues::set(int64_t r) {
  if (words.empty() && fill)
    return;
  materialize();
  words[r / 64] |= uint64_t(1) << (r % 64);
}

Residues &Residues::operator&=(const Residues &other) {
  assert(k == other.k && "residues of one K");
  if (other.words.empty()) {
    if (!other.fill)
      *this = none(k);
    return *this; // & all: unchanged
  }
  if (words.empty() && fill)
    return *this = other;
  if (words.empty())
    return *this; // none
  for (size_t i = 0; i < words.size(); ++i)
    words[i] &= other.words[i];
  return *this;
}

Residues &Residues::operator|=(const Residues &other) {
  assert(k == other.k && "residues of one K");
  if (other.words.empty()) {
    if (other.fill)
      *this = Residues(k, true);
    return *this; // | none: unchanged
  }
  if (words.empty() && !fill)
    return *this = other;
  if (words.empty())
    return *this; // all
  for (size_t i = 0; i < words.size(); ++i)
    words[i] |= other.words[i];
  return *this;
}

Residues Residues::minus(const Residues &other) const {
  assert(k == other.k && "residues of one K");
  if (other.words.empty())
    return other.fill ? none(k) : *this;
  if (words.empty() && !fill)
    return *this;
  Residues out = *this;
  out.materialize();
  for (size_t i = 0; i < out.words.size(); ++i)
    out.words[i] &= ~other.words[i];
  return out;
}

bool Residues::operator==(const Residues &other) const {
  if (k != other.k)
    return false;
  if (words.empty() && other.words.empty())
    return fill == other.fill || k == 0;
  for (size_t i = 0; i < numWords(); ++i)
    if (word(i) != other.word(i))
      return false;
  return true;
}

bool Residues::empty() const {
  if (words.empty())
    return !fill || k == 0;
  for (uint64_t w : words)
    if (w)
      return false;
  return true;
}

bool Residues::full() const {
  if (words.empty())
    return fill || k == 0;
  for (size_t i = 0; i < words.size(); ++i)
    if (words[i] != usedBits(k, i))
      return false;
  return true;
}

std::optional<int64_t> Residues::first() const {
  for (size_t i = 0; i < numWords(); ++i)
    if (uint64_t w = word(i))
      return int64_t(i * 64) + llvm::countr_zero(w);
  return std::nullopt;
}

ChunkLayout::ChunkLayout(int64_t chunks)
    : k(chunks < 1 ? 1 : chunks),
      userLast(std::make_shared<UserLastCache>()), scratchLast(k) {
  // At a count r < K every chunk holds 0 or 1 element: the one it holds
  // is its last element at every count c = q*K + r.
  for (int64_t r = 0; r < k; ++r)
    if (elems(false, 0, r) == 1)
      scratchLast.set(r);
  if (k > kEagerChunks)
    return;
  eagerUserLast.assign(k, Residues(k));
  for (int64_t r = 0; r < k; ++r)
    for (int64_t j = 0; j < k; ++j)
      if (elems(true, j, r) == 1)
        eagerUserLast[j].set(r);
}

const Residues &ChunkLayout::lastElement(bool user, int64_t index) const {
  if (!user)
    return scratchLast;
  if (!eagerUserLast.empty())
    return eagerUserLast[index % k];
  std::lock_guard<std::mutex> lock(userLast->mutex);
  auto [it, inserted] = userLast->sets.try_emplace(index % k, k);
  if (inserted)
    for (int64_t r = 0; r < k; ++r)
      if (elems(true, index % k, r) == 1)
        it->second.set(r);
  return it->second; // nodes of an unordered_map stay where they are
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
