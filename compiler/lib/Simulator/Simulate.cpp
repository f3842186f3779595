//===- Simulate.cpp - Runs every size and schedule and prints a verdict --===//

#include "Reference.h"
#include "Schedule.h"
#include "Trace.h"

#include "mscl/IR/MsclLaunches.h"
#include "mscclc/floor/Shape.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

using namespace mlir;
using namespace mscl;
using namespace mscclc::sim;

static std::string formatBytes(int64_t bytes) {
  const char *units[] = {"B", "KB", "MB", "GB"};
  double value = bytes;
  int unit = 0;
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  if (value == static_cast<int64_t>(value))
    return llvm::formatv("{0} {1}", static_cast<int64_t>(value), units[unit]);
  return llvm::formatv("{0:f1} {1}", value, units[unit]);
}

static std::string formatTime(double us) {
  if (us >= 1000)
    return llvm::formatv("{0:f2} ms", us / 1000);
  return llvm::formatv("{0:f2} us", us);
}

/// nccl-tests' bus bandwidth factor.
static double busFactor(CollectiveKind kind, int n) {
  switch (kind) {
  case CollectiveKind::allreduce:
    return 2.0 * (n - 1) / n;
  case CollectiveKind::broadcast:
  case CollectiveKind::reduce:
  case CollectiveKind::custom:
    return 1;
  default:
    return static_cast<double>(n - 1) / n;
  }
}

/// How many counts one byte size holds: the sizes follow nccl-tests, where
/// allgather, reducescatter, gather, scatter and alltoall count the gathered
/// buffer.
static int64_t countFactor(const Model &model) {
  mscclc::Collective c = toFloor(model.collective);
  return static_cast<int64_t>(
      std::max(mscclc::inputElements(c, 1, model.ranks),
               mscclc::outputElements(c, 1, model.ranks)));
}

LogicalResult mscclc::sim::simulate(ProgramOp program,
                                    const SimulationOptions &options,
                                    llvm::raw_ostream &report) {
  FailureOr<Model> built = Model::build(program);
  if (failed(built))
    return failure();
  const Model &model = *built;
#ifdef __GLIBC__
  // Puts allocate and free chunk-sized buffers all the time; served by mmap
  // (glibc's default above 128 KB) every one of them costs page faults.
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
  int64_t elem = byteSize(options.dataType);
  int64_t factor = countFactor(model);
  std::vector<int64_t> sizes = options.sizes;
  // Tiny counts and counts that do not divide by K: 2K - 1 leaves the
  // largest remainder, where every chunk but the first has one more
  // element than the first.
  if (sizes.empty())
    for (int64_t count : {int64_t(1), int64_t(7), 2 * model.chunks - 1,
                          int64_t(1003), (int64_t(1) << 20) / (elem * factor)})
      if (int64_t bytes = std::max<int64_t>(count, 1) * elem * factor;
          !llvm::is_contained(sizes, bytes))
        sizes.push_back(bytes);
  int64_t schedules = std::max<int64_t>(1, options.schedules);
  std::string name = program.getSymName().str();
  std::string header = llvm::formatv(
      "simulation: {0}, {1} ranks{2}, {3} schedules x {4} sizes", name,
      model.ranks,
      model.gpusPerNode < model.ranks
          ? std::string(llvm::formatv(" ({0} nodes x {1})",
                                      model.ranks / model.gpusPerNode,
                                      model.gpusPerNode))
          : std::string(),
      schedules, sizes.size());

  // After the single-launch schedules of every size, a second round runs
  // back-to-back launches (two, or three where LL packet buffers could be
  // reused by a writer two launches ahead), each with one rank slowed
  // down: schedules - 1 adversarial ones per size, one in eight of them.
  int repeated = launchesToModel(program);
  int64_t repeatedSchedules = std::max<int64_t>(1, schedules / 8);
  std::vector<std::string> estimates;
  std::vector<Region> pool; // buffers reused from one schedule to the next
  for (int round = 0; round < (options.acrossLaunches ? 2 : 1); ++round)
  for (auto [sizeIndex, bytes] : llvm::enumerate(sizes)) {
    Layout layout{std::max<int64_t>(1, bytes / (elem * factor)),
                  model.chunks};
    // Every element takes a 64-bit word on every rank.
    int64_t words = 0;
    for (const BufferInfo &buffer : model.buffers)
      words += layout.size(buffer) * model.ranks;
    if (words > (int64_t(1) << 28)) {
      emitError(program.getLoc())
          << "cannot simulate " << formatBytes(bytes) << " on " << model.ranks
          << " ranks: the buffers would hold " << words
          << " elements (at most 268435456); choose a smaller --bytes";
      return failure();
    }
    Reference reference(model, layout, options.dataType, options.reduceKind,
                        makeInputs(model, layout, options.dataType,
                                   options.reduceKind,
                                   mixSeed(options.seed, sizeIndex, 0x5eed)));
    bool last = sizeIndex + 1 == sizes.size();
    int64_t first = round == 0 ? 0 : schedules;
    int64_t end = round == 0 ? schedules : schedules + repeatedSchedules;
    for (int64_t s = first; s < end; ++s) {
      bool tracing = s == 0 && last && !options.tracePath.empty();
      int launches = round == 0 ? 1 : repeated;
      Machine machine(model, layout, options.dataType, options.reduceKind,
                      options.cost, tracing, &pool, launches);
      machine.initInputs(reference.inputs());
      uint64_t seed = mixSeed(options.seed, sizeIndex, s);
      int slowRank = static_cast<int>(seed % uint64_t(model.ranks));
      // Every other schedule of the repeated launches slows the rank's
      // deliveries instead of its blocks.
      bool slowDeliveries = s % 2 == 1;
      std::unique_ptr<Strategy> strategy =
          s == 0          ? makeTimedStrategy()
          : launches == 1 ? makeRandomStrategy(seed)
                          : makeSkewedStrategy(
                                seed, slowDeliveries
                                          ? machine.deliveriesOfRank(slowRank)
                                          : machine.tasksOfRank(slowRank));
      // The operator only where the collective reduces (custom programs
      // may).
      std::string op = isReduction(model.collective) ||
                               model.collective == CollectiveKind::custom
                           ? ", " + stringify(options.reduceKind).str()
                           : std::string();
      std::string context = llvm::formatv(
          "size {0} = {1} elements of {2}{3}, {4}, --seed {5}",
          formatBytes(bytes), layout.count, stringify(options.dataType), op,
          s == 0 ? std::string("timed schedule 0")
          : launches == 1
              ? std::string(llvm::formatv("adversarial schedule {0}", s))
              : std::string(llvm::formatv(
                    "adversarial schedule {0}: {1} launches, rank {2}{3} slow",
                    s, launches, slowRank,
                    slowDeliveries ? "'s deliveries" : "")),
          options.seed);
      // In place, a later launch starts from the previous one's result:
      // the launches' results are the single-launch schedules' to check.
      bool checkResult = launches == 1 || !model.inplace;
      if (failed(machine.run(*strategy, context)) ||
          (checkResult && failed(reference.check(machine)))) {
        report << header << ": FAIL (" << context << ")\n";
        return failure();
      }
      machine.recycle(pool);
      if (s != 0)
        continue;
      double us = machine.finishTime();
      double algbw = us > 0 ? bytes / (us * 1e3) : 0;
      report << llvm::formatv(
          "estimated time {0} at {1} (algbw {2:f2} GB/s, busbw {3:f2} GB/s)\n",
          formatTime(us), formatBytes(bytes), algbw,
          algbw * busFactor(model.collective, model.ranks));
      estimates.push_back(formatTime(us) + " at " + formatBytes(bytes));
      if (tracing) {
        std::string error = writeTrace(options.tracePath, model,
                                       machine.trace, name, us,
                                       machine.truncated);
        if (!error.empty()) {
          emitError(program.getLoc()) << error;
          return failure();
        }
      }
    }
  }
  report << header << ": PASS (estimated ";
  llvm::interleave(estimates, report, ", ");
  report << ")";
  if (model.collective == CollectiveKind::custom)
    report << "; results not checked: custom collective";
  report << "\n";
  return success();
}
