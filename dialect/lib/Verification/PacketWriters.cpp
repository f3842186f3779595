//===- PacketWriters.cpp - One LL put per packet chunk ---------------------===//
//
// An LL read spins until every packet of its chunk carries this launch's
// flag, so a packet chunk that is read needs an LL put writing it, and a
// second put to the same chunk in one launch would race with the first (the
// reader cannot tell which one it saw).
//
//===----------------------------------------------------------------------===//

#include "Checks.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mscl;
using namespace mscl::verify;

LogicalResult mscl::verify::checkPacketWriters(const ProgramModel &model,
                                               const Scheduler &scheduler) {
  bool ok = true;
  const auto &writers = scheduler.packetWriters();
  llvm::DenseSet<Operation *> reported;
  // Double writers, reported once per operation, at the later put.
  std::vector<std::pair<int64_t, llvm::SmallVector<StepRef, 1>>> doubles;
  for (const auto &[slot, puts] : writers)
    if (puts.size() > 1)
      doubles.push_back({slot, puts});
  llvm::sort(doubles,
             [](const auto &a, const auto &b) { return a.first < b.first; });
  for (const auto &[slot, puts] : doubles) {
    Operation *second = model.step(puts[1]).op;
    if (!reported.insert(second).second)
      continue;
    ok = false;
    InFlightDiagnostic diag =
        second->emitError()
        << "LL put writes packet chunk " << model.slotName(slot)
        << " a second time; each packet chunk takes exactly one LL put per "
           "launch";
    diag.attachNote(model.step(puts[0]).op->getLoc())
        << "first written here by " << model.blockName(puts[0].block);
  }
  // Reads of packets nobody writes.
  for (const Block &block : model.blocks)
    for (const Step &step : block.steps)
      model.forEachPacketRead(step, [&](const Move &, const Range &src,
                                    int64_t j) {
        int64_t slot = model.slot(src, j);
        if (writers.count(slot) || !reported.insert(step.op).second)
          return;
        ok = false;
        step.op->emitError()
            << "reads packet chunk " << model.slotName(slot)
            << ", which no LL put writes; the read would spin forever";
      });
  return success(ok);
}
