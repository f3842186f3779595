//===- LayoutTest.cpp - Residue sets and the chunk layout -----------------===//
//
// Residues keeps "none" and "all" without bits and gives a set its bits
// only when needed; the layout works out a user chunk's residues up front
// for small K and on demand past it. Both against the plainest model: a
// vector of bools, and the chunk sizes of Layout.h counted one by one.
//
//===----------------------------------------------------------------------===//

#include "mscl/IR/MsclLayout.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

using mscl::ChunkLayout;
using mscl::Residues;

namespace {

using Model = std::vector<bool>;

Model modelOf(const Residues &set, int64_t k) {
  Model m(k);
  for (int64_t r = 0; r < k; ++r)
    m[r] = set.test(r);
  return m;
}

/// A random set: none, all, or random bits, so every pairing of the
/// three forms comes up.
Residues randomSet(int64_t k, std::mt19937 &rng, Model *model) {
  int form = rng() % 3;
  Residues set(k, form == 1);
  model->assign(k, form == 1);
  if (form == 2)
    for (int64_t r = 0; r < k; ++r)
      if (rng() % 2) {
        set.set(r);
        (*model)[r] = true;
      }
  return set;
}

void expectSame(const Residues &set, const Model &model) {
  int64_t k = static_cast<int64_t>(model.size());
  ASSERT_EQ(modelOf(set, k), model);
  bool none = true, all = true;
  std::optional<int64_t> first;
  for (int64_t r = 0; r < k; ++r) {
    none &= !model[r];
    all &= model[r];
    if (model[r] && !first)
      first = r;
  }
  EXPECT_EQ(set.empty(), none);
  EXPECT_EQ(set.full(), all);
  EXPECT_EQ(set.first(), first);
}

} // namespace

TEST(Residues, OperationsMatchAVectorOfBools) {
  std::mt19937 rng(7);
  for (int64_t k : {1, 3, 63, 64, 65, 130, 256, 1000}) {
    for (int trial = 0; trial < 200; ++trial) {
      Model ma, mb;
      Residues a = randomSet(k, rng, &ma), b = randomSet(k, rng, &mb);
      Model both(k), either(k), aNotB(k);
      for (int64_t r = 0; r < k; ++r) {
        both[r] = ma[r] && mb[r];
        either[r] = ma[r] || mb[r];
        aNotB[r] = ma[r] && !mb[r];
      }
      Residues andSet = a, orSet = a;
      andSet &= b;
      orSet |= b;
      expectSame(andSet, both);
      expectSame(orSet, either);
      expectSame(a.minus(b), aNotB);
      // Equality is of the sets, whatever their form.
      EXPECT_EQ(a == b, ma == mb);
      Residues bits = Residues::none(k);
      for (int64_t r = 0; r < k; ++r)
        if (ma[r])
          bits.set(r);
      EXPECT_TRUE(bits == a);
    }
  }
}

TEST(ChunkLayout, LastElementsMatchChunkSizes) {
  // Up front (K <= 1024) and on demand (past it): a user chunk has its
  // last element at residue r iff it holds one element at count r.
  for (int64_t k : {1, 2, 7, 64, 100, 1024, 1025, 3000}) {
    ChunkLayout layout(k);
    for (int64_t j : {int64_t(0), k / 3, k - 1, k, 2 * k + 1}) {
      const Residues &last = layout.lastElement(/*user=*/true, j);
      for (int64_t r = 0; r < k; ++r)
        ASSERT_EQ(last.test(r), layout.elems(true, j % k, r) == 1)
            << "K " << k << " chunk " << j << " residue " << r;
    }
    const Residues &scratch = layout.lastElement(/*user=*/false, 5);
    for (int64_t r = 0; r < k; ++r)
      ASSERT_EQ(scratch.test(r), layout.elems(false, 0, r) == 1);
  }
}
