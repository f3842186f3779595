//===- PlanEmitter.cpp - The JSON plan the runtime launches kernels from -===//
//
// docs/plan.md is the contract. `--emit=bundle` writes the plan and the
// kernels from one ProgramInfo, so channel order, wait slots and grid sizes
// always match the generated code.
//
//===----------------------------------------------------------------------===//

#include "Emitters.h"
#include "mscclc/device/KernelArgs.h"
#include "mscclc/floor/Tables.h"

#include "llvm/Support/JSON.h"

using namespace mlir;
using namespace mscl;

namespace mscclc {
namespace backend {
namespace {

void writeChannel(llvm::json::OStream &j, const ChannelInfo &c) {
  j.object([&] {
    j.attribute("index", c.index);
    j.attribute("name", c.name);
    j.attribute("peer", c.dst);
    if (!c.isPort)
      j.attribute("protocol", c.isLL ? "LL" : "HB");
    j.attribute("id", c.id);
    j.attribute("peerIndex", c.peerIndex);
    j.attribute("block", c.block);
    j.attribute("group", c.group);
    j.attribute("waitSlot", c.waitSlot);
    j.attribute("signals", c.signals);
    j.attribute("waits", c.waits);
    j.attributeArray("peerBuffers", [&] {
      for (const std::string &b : c.peerBuffers)
        j.value(b);
    });
  });
}

} // namespace

void writePlan(const ProgramInfo &info, llvm::raw_ostream &os,
               const EmitOptions &options) {
  ProgramOp program = info.program;
  llvm::json::OStream j(os, 2);
  j.object([&] {
    j.attribute("format", "mscclc-plan");
    j.attribute("version", 1);
    j.attribute("abiVersion", MSCCLC_ABI_VERSION);
    j.attribute("name", info.name);
    j.attribute("collective",
                stringifyCollectiveKind(program.getCollective()).str());
    j.attribute("ranks", info.ranks);
    j.attribute("gpusPerNode", static_cast<int64_t>(program.getGpusPerNode()));
    j.attribute("instances", static_cast<int64_t>(program.getInstances()));
    j.attribute("chunks", info.chunks);
    j.attribute("inputChunks", static_cast<int64_t>(program.getInputChunks()));
    j.attribute("outputChunks",
                static_cast<int64_t>(program.getOutputChunks()));
    j.attribute("inPlace", program.getInplace());
    j.attribute("root", static_cast<int64_t>(program.getRoot()));
    j.attribute("threadsPerBlock", options.threadsPerBlock);
    // Every type and operator of the floor's tables; NVLink SHARP
    // (switch channels) reduces only those marked multimem.
    j.attributeArray("dtypes", [&] {
      for (const mscclc::DataTypeInfo &t : mscclc::kDataTypes)
        if (t.multimem || !info.usesSwitch)
          j.value(t.name);
    });
    j.attributeArray("redops", [&] {
      for (const mscclc::RedOpInfo &op : mscclc::kRedOps)
        if (op.multimem || !info.usesSwitch)
          j.value(op.name);
    });
    j.attribute("premulKernel", premulKernelName(info));
    j.attribute("usesPortChannels", info.usesPort);
    j.attribute("usesSwitchChannels", info.usesSwitch);
    j.attributeArray("scratch", [&] {
      for (const BufferInfo *s : info.scratch)
        j.object([&] {
          j.attribute("name", s->name);
          j.attribute("index", s->scratchIndex);
          j.attribute("chunks", s->chunks);
          j.attribute("packet", s->packet);
        });
    });
    j.attributeArray("rankPlans", [&] {
      for (const RankInfo &r : info.rankInfos)
        j.object([&] {
          j.attribute("rank", r.rank);
          j.attribute("kernel", kernelName(info, r.rank));
          j.attribute("blocks", std::max<int64_t>(1, r.blocks));
          j.attribute("waitSlots", r.waitSlots);
          j.attributeArray("memoryChannels", [&] {
            for (const ChannelInfo *c : r.memory)
              writeChannel(j, *c);
          });
          j.attributeArray("portChannels", [&] {
            for (const ChannelInfo *c : r.port)
              writeChannel(j, *c);
          });
          j.attributeArray("switchChannels", [&] {
            for (const SwitchInfo *s : r.switches)
              j.object([&] {
                j.attribute("index", s->indexOnRank.at(r.rank));
                j.attribute("name", s->name);
                j.attribute("id", s->id);
                j.attributeArray("ranks", [&] {
                  for (int64_t g : s->ranks)
                    j.value(g);
                });
                j.attributeArray("buffers", [&] {
                  for (const std::string &b : s->buffers)
                    j.value(b);
                });
              });
          });
        });
    });
  });
  os << "\n";
}

} // namespace backend

LogicalResult emitPlan(ProgramOp program, llvm::raw_ostream &os,
                       const EmitOptions &options) {
  std::optional<backend::ProgramInfo> info =
      backend::ProgramInfo::build(program);
  if (!info)
    return failure();
  backend::writePlan(*info, os, options);
  return success();
}

LogicalResult emitBundle(ProgramOp program, llvm::raw_ostream &os,
                         const EmitOptions &options) {
  std::optional<backend::ProgramInfo> info =
      backend::ProgramInfo::build(program);
  if (!info)
    return failure();
  std::string cuda;
  llvm::raw_string_ostream cudaOs(cuda);
  if (failed(backend::writeKernels(*info, cudaOs, options)))
    return failure();
  llvm::json::OStream j(os, 2);
  j.object([&] {
    j.attribute("format", "mscclc-bundle");
    j.attribute("version", 1);
    j.attributeBegin("plan");
    j.rawValue([&](llvm::raw_ostream &raw) {
      backend::writePlan(*info, raw, options);
    });
    j.attributeEnd();
    j.attribute("cuda", cuda);
  });
  os << "\n";
  return success();
}

} // namespace mscclc
