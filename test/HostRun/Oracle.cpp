//===- Oracle.cpp - Inputs and the expected outputs of a launch ----------===//

#include "Oracle.h"
#include "Exprs.h"
#include "KernelUnit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace hostrun {

namespace {

uint64_t splitmix(uint64_t &state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// A generator of its own for every (seed, launch, rank, purpose).
uint64_t streamSeed(uint64_t seed, unsigned launch, int rank, int purpose) {
  uint64_t s = seed;
  splitmix(s);
  s ^= (uint64_t(launch) << 24) ^ (uint64_t(rank) << 4) ^ uint64_t(purpose);
  splitmix(s);
  return s;
}

std::string rankList(const std::vector<int> &ranks) {
  std::string s;
  for (int r : ranks)
    s += (s.empty() ? "" : ", ") + std::to_string(r);
  return "{" + s + "}";
}

} // namespace

Geometry geometry(const Plan &plan, int rank, uint64_t count) {
  Geometry g;
  g.count = count;
  g.inElems = plan.inputElems(count);
  g.outElems = plan.outputElems(count);
  g.bufElems = g.outElems;
  if (plan.inPlace) {
    const std::string &c = plan.collective;
    if (c == "allgather" || c == "gather")
      g.inBase = uint64_t(rank) * count;
    if (c == "reducescatter" || c == "scatter")
      g.outBase = uint64_t(rank) * count;
    g.bufElems = std::max(g.inElems, g.outElems);
  }
  return g;
}

uint64_t chunkOf(uint64_t e, uint64_t count, uint64_t chunks, uint64_t limit) {
  if (count == 0 || limit == 0)
    return 0;
  uint64_t j =
      static_cast<uint64_t>(static_cast<unsigned __int128>(e) * chunks / count);
  j = std::min(j, limit - 1);
  while (j > 0 && mscclc_chunk_begin(j, count, chunks) > e)
    --j;
  while (j + 1 < limit && mscclc_chunk_begin(j + 1, count, chunks) <= e)
    ++j;
  return j;
}

Oracle::Oracle(const Plan &plan, const DType &type, const std::string &redop,
               uint64_t seed, const std::string &exprsPath)
    : plan_(plan), type_(type), redop_(redop), seed_(seed) {
  if (!exprsPath.empty())
    exprs_ = Exprs::read(exprsPath, plan);
}

Oracle::~Oracle() = default;

Oracle::Rule Oracle::rule(const Geometry &g, int r, uint64_t e,
                          std::vector<Term> &terms) const {
  const std::string &c = plan_.collective;
  const int n = plan_.ranks, root = plan_.root;
  const uint64_t count = g.count;
  terms.clear();
  auto all = [&](uint64_t element) {
    for (int q = 0; q < n; ++q)
      terms.push_back({q, element});
    return Rule::Reduce;
  };
  auto one = [&](int q, uint64_t element) {
    terms.push_back({q, element});
    return Rule::Copy;
  };
  if (c == "allreduce")
    return all(e);
  if (c == "allgather")
    return one(int(e / count), e % count);
  if (c == "reducescatter")
    return all(uint64_t(r) * count + e);
  if (c == "broadcast")
    return one(root, e);
  if (c == "reduce")
    return r == root ? all(e) : Rule::Keep;
  if (c == "gather")
    return r == root ? one(int(e / count), e % count) : Rule::Keep;
  if (c == "scatter")
    return one(root, uint64_t(r) * count + e);
  if (c == "alltoall")
    return one(int(e / count), uint64_t(r) * count + e % count);
  return Rule::Free;
}

void Oracle::fillInput(unsigned launch, int rank,
                       std::vector<unsigned char> &out, uint64_t elems) const {
  const unsigned size = type_.size;
  out.resize(elems * size);
  uint64_t s = streamSeed(seed_, launch, rank, 0);
  const bool prod = redop_ == "prod", sum = redop_ == "sum";
  for (uint64_t i = 0; i < elems; ++i) {
    uint64_t bits = splitmix(s);
    unsigned char *p = &out[i * size];
    if (type_.kind != Kind::Float) {
      // Odd factors keep products from collapsing to 0 modulo 2^bits;
      // nonzero terms make every missing contribution change a sum.
      if (prod)
        bits |= 1;
      else if (sum && (size == 8 ? bits : bits & ((1ull << 8 * size) - 1)) == 0)
        bits = 1;
      std::memcpy(p, &bits, size);
      continue;
    }
    // [1, 2) for sum and prod: no cancellation, so every term moves a sum
    // by at least 1 and the rounding error bound stays small; [-4, 4) for
    // min and max, whose results are exact.
    const double unit = double(bits >> 11) * 0x1p-53;
    mscclc_hostrun_from_double(sum || prod ? 1 + unit : 8 * unit - 4, p);
  }
}

void Oracle::expectCollective(const Case &c, int r, RankCase &rc) const {
  const unsigned size = type_.size;
  const bool exact =
      type_.kind != Kind::Float || redop_ == "min" || redop_ == "max";
  std::vector<Term> terms;
  for (uint64_t e = 0; e < rc.geo.outElems; ++e) {
    unsigned char *want = &rc.expect[e * size];
    switch (rule(rc.geo, r, e, terms)) {
    case Rule::Free:
      break;
    case Rule::Keep:
      rc.check[e] = Check::Keep;
      break;
    case Rule::Copy:
    case Rule::Reduce: {
      auto input = [&](const Term &t) {
        return &c.ranks[size_t(t.rank)].input[t.element * size];
      };
      if (exact || terms.size() == 1) {
        std::memcpy(want, input(terms[0]), size);
        for (size_t i = 1; i < terms.size(); ++i)
          mscclc_hostrun_apply(want, input(terms[i]), want);
        rc.check[e] = Check::Exact;
        break;
      }
      // Every rounding of a sum of positive terms is off by at most the
      // unit roundoff times the partial result, which is at most the whole
      // sum; likewise, relatively, for products of factors >= 1. The
      // reference is computed in long double and rounded once to double.
      long double v = redop_ == "sum" ? 0 : 1, magnitude = 0;
      for (const Term &t : terms) {
        const long double x = mscclc_hostrun_to_double(input(t));
        v = redop_ == "sum" ? v + x : v * x;
        magnitude += fabsl(x);
      }
      const double scale = double(redop_ == "sum" ? magnitude : fabsl(v));
      rc.check[e] = Check::Approx;
      rc.value[e] = double(v);
      rc.tol[e] =
          (double(terms.size() - 1) * type_.roundoff * 1.0001 + 0x1p-52) *
          scale;
      break;
    }
    }
  }
}

Case Oracle::make(unsigned launch, uint64_t count) const {
  const unsigned size = type_.size;
  Case c;
  c.count = count;
  c.ranks.resize(size_t(plan_.ranks));
  for (int r = 0; r < plan_.ranks; ++r) {
    RankCase &rc = c.ranks[size_t(r)];
    rc.geo = geometry(plan_, r, count);
    fillInput(launch, r, rc.input, rc.geo.inElems);
  }
  for (int r = 0; r < plan_.ranks; ++r) {
    RankCase &rc = c.ranks[size_t(r)];
    const Geometry &g = rc.geo;
    rc.check.assign(g.outElems, Check::Free);
    rc.expect.assign(g.outElems * size, 0);
    rc.value.assign(g.outElems, 0);
    rc.tol.assign(g.outElems, 0);
    if (exprs_)
      exprs_->expect(plan_, c, r, rc, size);
    else
      expectCollective(c, r, rc);
    // The buffer before the launch: noise, with what must change set to
    // what it must not end as, then the input where it lies in place.
    rc.initial.resize(g.bufElems * size);
    uint64_t s = streamSeed(seed_, launch, r, 1);
    for (unsigned char &b : rc.initial)
      b = static_cast<unsigned char>(splitmix(s));
    for (uint64_t e = 0; e < g.outElems; ++e) {
      unsigned char *p = &rc.initial[(g.outBase + e) * size];
      if (rc.check[e] == Check::Exact)
        for (unsigned i = 0; i < size; ++i)
          p[i] = static_cast<unsigned char>(~rc.expect[e * size + i]);
      else if (rc.check[e] == Check::Approx)
        std::memset(p, 0xff, size); // NaN in every float type
    }
    if (plan_.inPlace && !rc.input.empty())
      std::memcpy(&rc.initial[g.inBase * size], rc.input.data(),
                  rc.input.size());
    for (uint64_t e = 0; e < g.outElems; ++e)
      if (rc.check[e] == Check::Keep)
        std::memcpy(&rc.expect[e * size], &rc.initial[(g.outBase + e) * size],
                    size);
  }
  return c;
}

std::string Oracle::explain(const Case &c, int r, uint64_t e,
                            const unsigned char *got) const {
  const unsigned size = type_.size;
  const RankCase &rc = c.ranks[size_t(r)];
  if (rc.check[e] != Check::Keep &&
      std::memcmp(got, &rc.initial[(rc.geo.outBase + e) * size], size) == 0)
    return "never written";
  if (exprs_)
    return {};
  std::vector<Term> terms;
  const Rule kind = rule(rc.geo, r, e, terms);
  auto input = [&](const Term &t) {
    return &c.ranks[size_t(t.rank)].input[t.element * size];
  };
  // Which contributions it holds: the reduction of which subset of them.
  if (kind == Rule::Reduce && terms.size() > 1 && terms.size() <= 16) {
    std::vector<unsigned char> acc(size);
    for (uint32_t mask = 1; mask + 1 < (1u << terms.size()); ++mask) {
      bool first = true, match;
      double v = 0;
      for (size_t i = 0; i < terms.size(); ++i) {
        if (!(mask >> i & 1))
          continue;
        if (first)
          std::memcpy(acc.data(), input(terms[i]), size);
        else
          mscclc_hostrun_apply(acc.data(), input(terms[i]), acc.data());
        const double x = mscclc_hostrun_to_double(input(terms[i]));
        v = first ? x : redop_ == "sum" ? v + x : v * x;
        first = false;
      }
      if (rc.check[e] == Check::Approx)
        match = std::fabs(mscclc_hostrun_to_double(got) - v) <= rc.tol[e];
      else
        match = std::memcmp(acc.data(), got, size) == 0;
      if (!match)
        continue;
      std::vector<int> in, out;
      for (size_t i = 0; i < terms.size(); ++i)
        (mask >> i & 1 ? in : out).push_back(terms[i].rank);
      return fmt::format("the reduction of ranks {} only, without {}",
                         rankList(in), rankList(out));
    }
    return {};
  }
  // Whose data it holds: the same element of another rank's input first.
  if (kind == Rule::Copy || kind == Rule::Reduce) {
    for (int pass = 0; pass < 2; ++pass)
      for (int q = 0; q < plan_.ranks; ++q) {
        const std::vector<unsigned char> &in = c.ranks[size_t(q)].input;
        const uint64_t n = in.size() / size;
        for (uint64_t i = pass == 0 ? terms[0].element : 0;
             i < (pass == 0 ? std::min(n, terms[0].element + 1) : n); ++i)
          if (std::memcmp(&in[i * size], got, size) == 0 &&
              !(q == terms[0].rank && i == terms[0].element))
            return fmt::format("rank {}'s input element {}", q, i);
      }
  }
  return {};
}

} // namespace hostrun
