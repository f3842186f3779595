//===- TestDependence.cpp - Print the dependence analysis for tests ------===//

#include "mscl/Analysis/Dependence.h"
#include "mscl/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace mscl {
#define GEN_PASS_DEF_MSCLTESTDEPENDENCE
#include "mscl/Transforms/Passes.h.inc"
} // namespace mscl

using namespace mlir;
using namespace mscl;

namespace {

std::string printChunk(ChunkAttr chunk) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "<rank " << chunk.getRank() << ", " << chunk.getBuffer() << "["
     << chunk.getIndex();
  if (chunk.getCount() != 1)
    os << ":" << chunk.getEnd();
  os << "]>";
  return text;
}

ArrayAttr printAccesses(Builder &b, ArrayRef<ChunkAccess> list) {
  SmallVector<Attribute> out;
  for (const ChunkAccess &access : list)
    out.push_back(b.getStringAttr((access.remote ? "remote " : "") +
                                  printChunk(access.chunk)));
  return b.getArrayAttr(out);
}

struct TestDependencePass final
    : mscl::impl::MsclTestDependenceBase<TestDependencePass> {
  void runOnOperation() override {
    ProgramOp program = getOperation();
    const auto &deps = getAnalysis<DependenceAnalysis>();
    Builder b(&getContext());
    for (auto rank : program.getBodyBlock().getOps<RankOp>())
      for (auto block : rank.getBody().front().getOps<ThreadBlockOp>()) {
        DenseMap<Operation *, int64_t> ids;
        block.walk<WalkOrder::PreOrder>([&](Operation *op) {
          if (op != block.getOperation())
            ids[op] = ids.size();
        });
        block.walk([&](Operation *op) {
          if (op == block.getOperation())
            return;
          op->setAttr("dep_id", b.getI64IntegerAttr(ids[op]));
          const OpAccesses &acc = deps.getAccesses(op);
          if (!acc.reads.empty())
            op->setAttr("dep_reads", printAccesses(b, acc.reads));
          if (!acc.writes.empty())
            op->setAttr("dep_writes", printAccesses(b, acc.writes));
          SmallVector<Attribute> in;
          for (const Dependence &dep : deps.getDependences(op)) {
            std::string text;
            llvm::raw_string_ostream os(text);
            os << stringifyDependenceKind(dep.kind) << " " << ids[dep.source]
               << " " << printChunk(dep.chunk);
            if (dep.loopCarried)
              os << " loop";
            if (dep.separated)
              os << " sep";
            in.push_back(b.getStringAttr(text));
          }
          if (!in.empty())
            op->setAttr("dep_in", b.getArrayAttr(in));
        });
      }
    markAllAnalysesPreserved();
  }
};

} // namespace
