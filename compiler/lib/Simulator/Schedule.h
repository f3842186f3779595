//===- Schedule.h - Timed and adversarial schedule strategies -*- C++ -*-===//
#ifndef MSCCLC_LIB_SIMULATOR_SCHEDULE_H
#define MSCCLC_LIB_SIMULATOR_SCHEDULE_H

#include "Machine.h"

#include <memory>

namespace mscclc {
namespace sim {

/// Schedule 0: a discrete-event run in cost-model time (always the action
/// with the earliest ready time), LL puts in one piece. It gives the time
/// estimate and the trace.
std::unique_ptr<Strategy> makeTimedStrategy();

/// A seeded adversarial interleaving. The seed picks one of several
/// policies: uniform choice among enabled actions; lazy delivery (run
/// tasks while any can run, so signals and packets land as late as
/// possible and waits observe stale state); eager delivery; and random task
/// priorities with a few random priority changes (PCT), which starves some
/// blocks for long stretches.
std::unique_ptr<Strategy> makeRandomStrategy(uint64_t seed);

/// An adversarial interleaving (as makeRandomStrategy) in which the owners
/// `slow` move only when nothing else can, or rarely. With one rank's
/// thread blocks slow, the other ranks race ahead, into the next launch of
/// a run of several, while those blocks are still in the previous one;
/// with what one rank's channels deliver slow (its proxy, signals, LL
/// pieces), the rank itself runs ahead of its own transfers.
std::unique_ptr<Strategy> makeSkewedStrategy(uint64_t seed,
                                             std::vector<int> slow);

/// Mixes a base seed with the size and schedule indices.
uint64_t mixSeed(uint64_t seed, uint64_t a, uint64_t b);

} // namespace sim
} // namespace mscclc

#endif // MSCCLC_LIB_SIMULATOR_SCHEDULE_H
