//===- ProgramPrint.cpp - Prints the Program the frontend evaluates -------===//
//
// `mscclc-program-print file.mscl [--ranks N] [--gpus-per-node G]
// [--instances I] [-D k=v] [--counts]` parses and evaluates an algorithm
// with the frontend and prints the resulting mscclc::Program (the form
// before MLIR generation: channels named and deduplicated, loops and calls
// unrolled); --counts prints the operations per rank instead. It tests
// what evaluation produces, which nothing else shows in this form; whether
// a program is correct is the static proof's to say (mscclc --emit=mlir:
// mscl-check-sync, mscl-check-collective, mscl-check-launches), on the IR
// that is really emitted.
//
//===----------------------------------------------------------------------===//

#include "mscclc/Frontend/Frontend.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace mscclc;
namespace cl = llvm::cl;

namespace {

cl::opt<std::string> inputFile(cl::Positional, cl::Required);
cl::opt<int64_t> ranks("ranks", cl::init(8));
cl::opt<int64_t> gpusPerNode("gpus-per-node", cl::init(0));
cl::opt<int64_t> instances("instances", cl::init(1));
cl::list<std::string> defines("D", cl::Prefix);
cl::opt<bool> counts("counts", cl::desc("print the operations per rank"),
                     cl::init(false));

void countOps(const std::vector<Operation> &ops,
              std::map<std::string, int> &into) {
  for (const Operation &op : ops) {
    ++into[stringifyOpKind(op.kind).str()];
    countOps(op.body, into);
  }
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv);
  auto buf = llvm::MemoryBuffer::getFile(inputFile, /*IsText=*/true);
  if (!buf) {
    llvm::errs() << "print: cannot open " << inputFile << "\n";
    return 1;
  }
  llvm::SourceMgr sm;
  sm.AddNewSourceBuffer(std::move(*buf), llvm::SMLoc());
  mlir::MLIRContext ctx;
  mlir::SourceMgrDiagnosticHandler handler(sm, &ctx);
  FrontendOptions opts;
  opts.ranks = ranks;
  if (gpusPerNode > 0)
    opts.gpusPerNode = gpusPerNode.getValue();
  opts.instances = instances;
  for (const std::string &d : defines) {
    auto [name, value] = llvm::StringRef(d).split('=');
    int64_t v = 0;
    if (value.getAsInteger(0, v)) {
      llvm::errs() << "print: bad -D " << d << "\n";
      return 1;
    }
    opts.defines.push_back({name.str(), v});
  }
  auto module = parseProgram(sm, ctx);
  if (!module)
    return 1;
  std::optional<Program> program = evaluateProgram(*module, opts, ctx);
  if (!program)
    return 1;
  if (!counts) {
    printProgram(*program, llvm::outs());
    return 0;
  }
  for (const RankProgram &rp : program->rankPrograms) {
    std::map<std::string, int> perKind;
    for (const ThreadBlock &tb : rp.threadBlocks)
      countOps(tb.ops, perKind);
    llvm::outs() << "rank " << rp.rank << ":";
    for (auto &[kind, n] : perKind)
      llvm::outs() << " " << kind << "=" << n;
    llvm::outs() << "\n";
  }
  return 0;
}
