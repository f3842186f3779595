//===- PacketSizes.cpp - LL reads take no more packets than were sent -----===//
//
// A chunk step moves the bodies of its operand chunks at every count, and
// their last elements only at the residues where every operand chunk has
// one (mscl/IR/MsclLayout.h). An LL put from a user chunk into a packet
// chunk therefore leaves the packet chunk's last element unsent at the
// residues where the user chunk has none; a read that takes it there (into
// scratch, or into a larger user chunk) spins forever on a packet nobody
// sends, or at best reads a stale element. So for every packet chunk that is
// read, the residues at which the read takes the last element must be
// residues at which its one LL put sends it.
//
//===----------------------------------------------------------------------===//

#include "Checks.h"

#include "mscl/IR/MsclLayout.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mscl;
using namespace mscl::verify;


LogicalResult mscl::verify::checkPacketSizes(const ProgramModel &model,
                                             const Scheduler &scheduler) {
  const auto &writers = scheduler.packetWriters();
  const ChunkLayout &layout = model.layout;
  llvm::DenseSet<Operation *> reported;
  bool ok = true;
  for (const Block &block : model.blocks)
    for (const Step &step : block.steps)
      model.forEachPacketRead(step, [&](const Move &move, const Range &src,
                                        int64_t j) {
        int64_t slot = model.slot(src, j);
        auto it = writers.find(slot);
        if (it == writers.end() || it->second.size() != 1)
          return; // checkPacketWriters reports these
        const Step &put = model.step(it->second.front());
        // The put's chunk step that writes this chunk.
        std::optional<Residues> sent;
        for (const Move &write : put.moves)
          if (write.dst.rank == src.rank && write.dst.buffer == src.buffer &&
              write.dst.index <= src.index + j &&
              src.index + j < write.dst.index + write.dst.count)
            sent = model.movesLast(write, src.index + j - write.dst.index);
        if (!sent)
          return;
        std::optional<int64_t> residue =
            model.movesLast(move, j).minus(*sent).first();
        if (!residue || !reported.insert(step.op).second)
          return;
        ok = false;
        int64_t count = layout.smallestCount(*residue);
        InFlightDiagnostic diag =
            step.op->emitError()
            << "reads more packets of " << model.slotName(slot)
            << " than the LL put into it sends: at count " << count;
        if (model.chunks > 1)
          diag << " (and every count q*" << model.chunks << " + " << *residue
               << ")";
        diag << " the put does not send the chunk's last element and this "
                "operation reads it; the read would spin forever on its "
                "packet";
        diag.attachNote(put.op->getLoc())
            << "the LL put, which moves as many elements of each chunk as "
               "the smallest of its operand chunks holds";
      });
  return success(ok);
}
