//===- Schedule.cpp - Timed and adversarial schedule strategies ----------===//

#include "Schedule.h"

#include "llvm/ADT/DenseMap.h"

using namespace mscclc::sim;

uint64_t mscclc::sim::mixSeed(uint64_t seed, uint64_t a, uint64_t b) {
  auto splitmix = [](uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
  };
  return splitmix(splitmix(splitmix(seed) ^ a) ^ (b * 0x2545f4914f6cdd1dull));
}

namespace {

class TimedStrategy final : public Strategy {
public:
  size_t pick(llvm::ArrayRef<double> ready, llvm::ArrayRef<bool> isEvent,
              llvm::ArrayRef<int>) override {
    size_t best = 0;
    for (size_t i = 1; i < ready.size(); ++i)
      // Deliveries first on ties, so a wait sees a signal landing at the
      // same time.
      if (ready[i] < ready[best] ||
          (ready[i] == ready[best] && isEvent[i] && !isEvent[best]))
        best = i;
    return best;
  }
  int llPieces(int64_t) override { return 1; }
  std::mt19937_64 &rng() override { return gen; }

private:
  std::mt19937_64 gen{1};
};

class RandomStrategy final : public Strategy {
public:
  explicit RandomStrategy(uint64_t seed) : gen(seed) {
    mode = gen() % 4;
    for (int i = 0; i < 3; ++i)
      changePoints.push_back(gen() % 4000);
  }

  size_t pick(llvm::ArrayRef<double>, llvm::ArrayRef<bool> isEvent,
              llvm::ArrayRef<int> owner) override {
    ++steps;
    size_t n = isEvent.size();
    switch (mode) {
    case 0:
      return uniform(n);
    case 1: // lazy delivery: events only when no task can run, or rarely
    case 2: { // eager delivery
      bool wantEvents = mode == 2 ? chance(0.9) : chance(0.03);
      llvm::SmallVector<size_t, 64> chosen;
      for (size_t i = 0; i < n; ++i)
        if (isEvent[i] == wantEvents)
          chosen.push_back(i);
      if (chosen.empty())
        return uniform(n);
      return chosen[uniform(chosen.size())];
    }
    default: { // priorities
      size_t best = 0;
      double bestPrio = -1;
      for (size_t i = 0; i < n; ++i) {
        double p = priority(owner[i]);
        if (p > bestPrio) {
          bestPrio = p;
          best = i;
        }
      }
      if (llvm::is_contained(changePoints, steps))
        priorities[owner[best]] = -static_cast<double>(steps);
      return best;
    }
    }
  }
  int llPieces(int64_t elements) override {
    return static_cast<int>(std::min<int64_t>(elements, 1 + gen() % 6));
  }
  std::mt19937_64 &rng() override { return gen; }

private:
  size_t uniform(size_t n) { return gen() % n; }
  bool chance(double p) {
    return std::uniform_real_distribution<double>(0, 1)(gen) < p;
  }
  double priority(int owner) {
    auto [it, inserted] = priorities.try_emplace(owner, 0.0);
    if (inserted)
      it->second = std::uniform_real_distribution<double>(1, 2)(gen);
    return it->second;
  }

  std::mt19937_64 gen;
  int mode;
  int64_t steps = 0;
  llvm::SmallVector<int64_t, 3> changePoints;
  llvm::DenseMap<int, double> priorities;
};

class SkewedStrategy final : public Strategy {
public:
  SkewedStrategy(uint64_t seed, std::vector<int> slow)
      : inner(seed), slow(std::move(slow)) {}

  size_t pick(llvm::ArrayRef<double> ready, llvm::ArrayRef<bool> isEvent,
              llvm::ArrayRef<int> owner) override {
    fast.clear();
    for (size_t i = 0; i < owner.size(); ++i)
      if (!llvm::is_contained(slow, owner[i]))
        fast.push_back(i);
    // The slow ones move when nothing else can, and now and then anyway.
    bool slowTurn = std::uniform_real_distribution<double>(0, 1)(
                        inner.rng()) < 0.02;
    if (fast.empty() || fast.size() == owner.size() || slowTurn)
      return inner.pick(ready, isEvent, owner);
    fastReady.clear();
    fastEvent.clear();
    fastOwner.clear();
    for (size_t i : fast) {
      fastReady.push_back(ready[i]);
      fastEvent.push_back(isEvent[i]);
      fastOwner.push_back(owner[i]);
    }
    return fast[inner.pick(fastReady, fastEvent, fastOwner)];
  }
  int llPieces(int64_t elements) override { return inner.llPieces(elements); }
  std::mt19937_64 &rng() override { return inner.rng(); }

private:
  RandomStrategy inner;
  std::vector<int> slow;
  llvm::SmallVector<size_t, 64> fast;
  llvm::SmallVector<double, 64> fastReady;
  llvm::SmallVector<bool, 64> fastEvent;
  llvm::SmallVector<int, 64> fastOwner;
};

} // namespace

std::unique_ptr<Strategy> mscclc::sim::makeSkewedStrategy(
    uint64_t seed, std::vector<int> slow) {
  return std::make_unique<SkewedStrategy>(seed, std::move(slow));
}

std::unique_ptr<Strategy> mscclc::sim::makeTimedStrategy() {
  return std::make_unique<TimedStrategy>();
}

std::unique_ptr<Strategy> mscclc::sim::makeRandomStrategy(uint64_t seed) {
  return std::make_unique<RandomStrategy>(seed);
}
