//===- Driver.cpp - The mscclc command line: options and what they run ---===//
//
// Reads an .mscl algorithm, evaluates it for the requested rank count and
// prints the stage the user asks for. Every diagnostic goes through MLIR's
// diagnostic engine, so errors read `file:line:col: error: ...` with the
// source line and a caret, and lit can check them with
// --verify-diagnostics. main (mscclc.cpp) parses the command line; the
// command-line fuzzer (fuzz/CommandLineFuzzer.cpp) runs the same driver.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"
#include "InputFiles.h"

#include "mscclc/Backend/Backend.h"
#include "mscclc/Driver/Compile.h"
#include "mscclc/Frontend/Frontend.h"
#include "mscclc/jit/HipOffload.h"
#include "mscclc/jit/Nvrtc.h"
#include "mscclc/runtime/Limits.h"
#include "mscclc/Simulator/Simulator.h"

#include "mscl/IR/MsclDialect.h"
#include "mscl/Verification/Expressions.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <optional>

using namespace mlir;
namespace cl = llvm::cl;

namespace {

enum class EmitKind {
  AST,
  MLIR,
  CUDA,
  HIP,
  Plan,
  Bundle,
  PTX,
  CUBIN,
  HSACO,
  Dot,
  Exprs
};

cl::OptionCategory mscclcCategory("mscclc options");

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<file.mscl>"),
                               cl::Required, cl::cat(mscclcCategory));
cl::opt<std::string> outputFile("o", cl::desc("Output file (default: stdout)"),
                                cl::value_desc("file"), cl::init("-"),
                                cl::cat(mscclcCategory));
cl::opt<int64_t> ranks("ranks", cl::desc("Number of ranks (GPUs)"),
                       cl::init(8), cl::cat(mscclcCategory));
cl::opt<int64_t> gpusPerNode("gpus-per-node",
                             cl::desc("Ranks per node (default: all)"),
                             cl::init(0), cl::cat(mscclcCategory));
cl::opt<int64_t> instances("instances",
                           cl::desc("Replicate the algorithm K times"),
                           cl::init(1), cl::cat(mscclcCategory));
cl::opt<int64_t> maxProofChunks(
    "max-proof-chunks",
    cl::desc("Most chunks (all buffers, all ranks, after replication) the "
             "static proof may track; about 40 bytes each (default 2^24)"),
    cl::init(mscclc::CompileOptions::kDefaultMaxProofChunks),
    cl::cat(mscclcCategory));
cl::list<std::string> defines("D", cl::Prefix,
                              cl::desc("Override a parameter: -D name=value"),
                              cl::value_desc("name=value"),
                              cl::cat(mscclcCategory));
cl::opt<EmitKind> emitKind(
    "emit", cl::desc("What to print"), cl::init(EmitKind::MLIR),
    cl::values(clEnumValN(EmitKind::AST, "ast", "the parsed syntax tree"),
               clEnumValN(EmitKind::MLIR, "mlir", "the mscl dialect"),
               clEnumValN(EmitKind::CUDA, "cuda", "CUDA C++, a kernel per rank"),
               clEnumValN(EmitKind::HIP, "hip",
                          "HIP C++ for AMD GPUs, a kernel per rank"),
               clEnumValN(EmitKind::Plan, "plan", "the runtime's JSON plan"),
               clEnumValN(EmitKind::Bundle, "bundle",
                          "the plan and the CUDA in one JSON document"),
               clEnumValN(EmitKind::PTX, "ptx", "PTX through NVRTC (--arch)"),
               clEnumValN(EmitKind::CUBIN, "cubin", "a CUBIN through NVRTC"),
               clEnumValN(EmitKind::HSACO, "hsaco",
                          "an AMDGPU code object through hipcc or clang "
                          "(--arch gfx90a|gfx942)"),
               clEnumValN(EmitKind::Dot, "dot",
                          "the data flow as a Graphviz graph"),
               clEnumValN(EmitKind::Exprs, "exprs",
                          "what every output chunk holds, as the proof "
                          "computes it (JSON expressions)")),
    cl::cat(mscclcCategory));
cl::opt<std::string> arch("arch",
                          cl::desc("GPU for --emit=ptx|cubin (default sm_90) "
                                   "or --emit=hsaco (default gfx90a)"),
                          cl::value_desc("sm_XX|gfxNNN"), cl::init("sm_90"),
                          cl::cat(mscclcCategory));
cl::opt<std::string> dtype("dtype",
                           cl::desc("MSCCLC_DTYPE for --emit=ptx|cubin|hsaco"),
                           cl::value_desc("f32|f16|bf16|..."), cl::init("f32"),
                           cl::cat(mscclcCategory));
cl::opt<std::string> redop("redop",
                           cl::desc("MSCCLC_REDOP for --emit=ptx|cubin|hsaco"),
                           cl::value_desc("sum|prod|min|max"), cl::init("sum"),
                           cl::cat(mscclcCategory));
cl::opt<int64_t> kernelRank(
    "rank",
    cl::desc("--emit=ptx|cubin|hsaco: only this rank's kernel (and the "
             "premul kernel), as the runtime compiles it"),
    cl::init(-1), cl::cat(mscclcCategory));
cl::opt<unsigned> threadsPerBlock("threads-per-block",
                                  cl::desc("blockDim.x recorded in the plan"),
                                  cl::init(512), cl::cat(mscclcCategory));
cl::opt<bool> embedHeaders(
    "embed-headers",
    cl::desc("--emit=cuda|hip: paste the device headers into the source"),
    cl::init(false), cl::cat(mscclcCategory));
cl::opt<bool> noPasses(
    "no-passes",
    cl::desc("Print MLIRGen's output: no optimisation passes (replicate, "
             "fuse, barriers) and no static proof"),
    cl::init(false), cl::cat(mscclcCategory));
// The static proof (docs/verification.md) runs by default on every .mscl
// program after the optimisation passes. It does not run with --no-passes
// (which shows MLIRGen's output as it is), on .mlir input (taken as it is),
// or under --simulate (the simulator checks the same properties on real
// runs, and must be able to run programs the proof rejects);
// --static-checks adds it there, --skip-static-checks turns it off.
cl::opt<bool> staticChecks(
    "static-checks",
    cl::desc("Run the static proof (mscl-check-sync, mscl-check-collective) "
             "under --simulate too; it runs by default otherwise"),
    cl::init(false), cl::cat(mscclcCategory));
cl::opt<bool> skipStaticChecks(
    "skip-static-checks",
    cl::desc("Skip the static proof"),
    cl::init(false), cl::cat(mscclcCategory));
cl::opt<bool> skipTranslationValidation(
    "skip-translation-validation",
    cl::desc("Skip translation validation, the check that the optimisation "
             "passes keep what the program computes"),
    cl::init(false), cl::cat(mscclcCategory));
cl::opt<bool> verifyEach(
    "verify-each",
    cl::desc("Run the MLIR verifier after every pass (by default once, after "
             "the last)"),
    cl::init(false), cl::cat(mscclcCategory));
cl::opt<bool> singleLaunch(
    "single-launch",
    cl::desc("Check one launch only, not back-to-back ones: the static proof "
             "leaves out mscl-check-launches, --simulate the round of "
             "repeated launches (for a program that runs once, or whose "
             "caller synchronises all ranks between launches)"),
    cl::init(false), cl::cat(mscclcCategory));
cl::opt<bool> verifyDiagnostics(
    "verify-diagnostics",
    cl::desc("Check diagnostics against expected-* comments in the input"),
    cl::init(false), cl::cat(mscclcCategory));

// Simulator (docs/simulator.md); --dtype and --redop (alias --op) apply too.
cl::opt<bool> simulateFlag(
    "simulate",
    cl::desc("Run the compiled program on the CPU simulator and check it"),
    cl::init(false), cl::cat(mscclcCategory));
cl::alias opAlias("op", cl::desc("Alias for --redop"), cl::aliasopt(redop),
                  cl::cat(mscclcCategory));
cl::opt<uint64_t> simSeed("seed", cl::desc("--simulate: base random seed"),
                          cl::init(1), cl::cat(mscclcCategory));
cl::opt<int64_t> simSchedules(
    "schedules",
    cl::desc("--simulate: schedules per size (the first is the timed one)"),
    cl::init(50), cl::cat(mscclcCategory));
cl::list<std::string> simBytes(
    "bytes", cl::CommaSeparated,
    cl::desc("--simulate: message sizes (e.g. 4K,1M; default: a set)"),
    cl::value_desc("size"), cl::cat(mscclcCategory));
cl::opt<std::string> simTrace(
    "trace", cl::desc("--simulate: write a Chrome/Perfetto trace"),
    cl::value_desc("out.json"), cl::cat(mscclcCategory));
cl::opt<std::string> simCostModel(
    "cost-model", cl::desc("--simulate: cost model as a JSON object"),
    cl::value_desc("file.json"), cl::cat(mscclcCategory));
cl::list<std::string> simCost("cost",
                              cl::desc("--simulate: set a cost-model value"),
                              cl::value_desc("key=value"),
                              cl::cat(mscclcCategory));
cl::opt<uint64_t> maxInputBytes(
    "max-input-bytes",
    cl::desc("Largest source or cost-model file read (default 16 MiB)"),
    cl::init(uint64_t(16) << 20), cl::cat(mscclcCategory));

// Limits of the command line, each named in the message that refuses a
// value past it. --simulate takes about 12 ms a schedule at 8 ranks: the
// most schedules run for minutes, not forever.
/// The runtime's limit: a plan of more ranks could never run.
constexpr int64_t kMaxRanks = mscclc::limits::kMaxRanks;
constexpr int64_t kMaxInstances = 1024;
constexpr int64_t kMaxSchedules = 100000;
constexpr int64_t kMaxProofChunks = int64_t(1) << 32;

void printVersion(llvm::raw_ostream &os) {
  os << "mscclc " << MSCCLC_VERSION << " (MLIR " << MSCCLC_MLIR_VERSION << ")\n";
}

/// Parses `-D name=value` arguments. Reports bad ones and returns nullopt.
std::optional<std::vector<std::pair<std::string, int64_t>>> parseDefines() {
  std::vector<std::pair<std::string, int64_t>> result;
  for (const std::string &define : defines) {
    size_t eq = define.find('=');
    int64_t value = 0;
    if (eq == std::string::npos || eq == 0 ||
        llvm::StringRef(define).substr(eq + 1).getAsInteger(0, value)) {
      llvm::errs() << "mscclc: error: -D expects name=integer, got '" << define
                   << "'\n";
      return std::nullopt;
    }
    result.emplace_back(define.substr(0, eq), value);
  }
  return result;
}

/// Runs the simulator on `program` with the command-line settings.
LogicalResult runSimulation(mscl::ProgramOp program, llvm::raw_ostream &os) {
  auto fail = [&](const llvm::Twine &message) {
    emitError(program.getLoc()) << message;
    return failure();
  };
  if (ranks.getNumOccurrences() && ranks != int64_t(program.getRanks()))
    return fail("--ranks " + llvm::Twine(ranks.getValue()) +
                " does not match the program's " +
                llvm::Twine(int64_t(program.getRanks())) + " ranks");
  if (gpusPerNode.getNumOccurrences() &&
      gpusPerNode != int64_t(program.getGpusPerNode()))
    return fail("--gpus-per-node does not match the program's " +
                llvm::Twine(int64_t(program.getGpusPerNode())));
  mscclc::sim::SimulationOptions options;
  options.seed = simSeed;
  options.schedules = simSchedules;
  options.acrossLaunches = !singleLaunch;
  // checkOptions() accepted both names.
  options.dataType = *mscclc::sim::parseDataType(dtype);
  options.reduceKind = *mscclc::sim::parseReduceKind(redop);
  for (const std::string &text : simBytes) {
    auto bytes = mscclc::sim::parseByteSize(text);
    if (!bytes)
      return fail("--bytes expects sizes such as 4096, 64K or 1M, got '" +
                  text + "'");
    options.sizes.push_back(*bytes);
  }
  options.tracePath = simTrace;
  if (!simCostModel.empty()) {
    std::string error;
    std::unique_ptr<llvm::MemoryBuffer> text = mscclc::tools::readInputFile(
        simCostModel, "cost model", maxInputBytes, &error);
    if (text)
      error = mscclc::sim::parseCostModel(text->getBuffer(), simCostModel,
                                          options.cost);
    if (!error.empty())
      return fail(error);
  }
  for (const std::string &keyValue : simCost) {
    std::string error = mscclc::sim::applyCostOverride(keyValue, options.cost);
    if (!error.empty())
      return fail(error);
  }
  return mscclc::sim::simulate(program, options, os);
}

/// The -D options of an ahead-of-time compile: data type, operator and,
/// with --rank, the one rank to keep; nullopt after an error.
std::optional<std::vector<std::string>>
compileDefines(mscl::ProgramOp program) {
  // The device headers know the canonical names only (f32, not float).
  std::vector<std::string> defines = {
      "-DMSCCLC_DTYPE=" +
          mscclc::sim::stringify(*mscclc::sim::parseDataType(dtype)).str(),
      "-DMSCCLC_REDOP=" +
          mscclc::sim::stringify(*mscclc::sim::parseReduceKind(redop)).str()};
  if (kernelRank.getNumOccurrences()) {
    if (kernelRank < 0 || kernelRank >= int64_t(program.getRanks())) {
      emitError(program.getLoc())
          << "--rank " << kernelRank.getValue() << " is not a rank of the "
          << int64_t(program.getRanks()) << "-rank program";
      return std::nullopt;
    }
    defines.push_back("-DMSCCLC_RANK=" + std::to_string(kernelRank.getValue()));
  }
  return defines;
}

/// --emit=hsaco: the HIP source through a HIP offload compiler.
LogicalResult emitHsaco(mscl::ProgramOp program, llvm::raw_ostream &os,
                        const mscclc::EmitOptions &options,
                        const std::vector<std::string> &defines) {
  mscclc::jit::HipOffloadRequest request;
  // checkOptions() accepted a given --arch.
  request.arch = arch.getNumOccurrences() ? arch.getValue() : "gfx90a";
  llvm::raw_string_ostream source(request.source);
  if (failed(mscclc::emitKernels(program, source, options)))
    return failure();
  request.defines = defines;
  mscclc::jit::HipOffloadResult result =
      mscclc::jit::compileWithHipOffload(request);
  if (!result.ok) {
    emitError(program.getLoc())
        << "cannot emit hsaco for " << request.arch << ": " << result.log;
    return failure();
  }
  os << result.binary;
  return success();
}

/// Prints the requested stage of a verified module: the dialect, or one of
/// the backend outputs (CUDA, HIP, plan, PTX/CUBIN through NVRTC, HSACO
/// through a HIP compiler).
LogicalResult emitModule(ModuleOp module, llvm::raw_ostream &os) {
  if (simulateFlag || emitKind == EmitKind::Dot) {
    mscl::ProgramOp program = mscclc::getSingleProgram(module);
    if (!program)
      return failure();
    if (simulateFlag)
      return runSimulation(program, os);
    mscclc::sim::emitDot(program, os);
    return success();
  }
  if (emitKind == EmitKind::MLIR || emitKind == EmitKind::AST) {
    // Verified already (after MLIRGen and after the passes): printing need
    // not walk the whole module once more to check.
    module.print(os, mlir::OpPrintingFlags().assumeVerified());
    os << "\n";
    return success();
  }
  mscl::ProgramOp program = mscclc::getSingleProgram(module);
  if (!program)
    return failure();
  mscclc::EmitOptions emitOptions;
  emitOptions.threadsPerBlock = threadsPerBlock;
  emitOptions.embedHeaders = embedHeaders;
  if (emitKind == EmitKind::Exprs)
    return mscl::writeExpressions(program, os);
  if (emitKind == EmitKind::Plan)
    return mscclc::emitPlan(program, os, emitOptions);
  if (emitKind == EmitKind::Bundle)
    return mscclc::emitBundle(program, os, emitOptions);
  if (emitKind == EmitKind::CUDA)
    return mscclc::emitKernels(program, os, emitOptions);
  if (emitKind == EmitKind::HIP) {
    emitOptions.target = mscclc::Target::HIP;
    return mscclc::emitKernels(program, os, emitOptions);
  }
  std::optional<std::vector<std::string>> defines = compileDefines(program);
  if (!defines)
    return failure();
  if (emitKind == EmitKind::HSACO) {
    emitOptions.target = mscclc::Target::HIP;
    return emitHsaco(program, os, emitOptions, *defines);
  }
  mscclc::jit::NvrtcRequest request;
  llvm::raw_string_ostream source(request.source);
  if (failed(mscclc::emitKernels(program, source, emitOptions)))
    return failure();
  request.arch = arch;
  request.output = emitKind == EmitKind::PTX ? mscclc::jit::NvrtcOutput::PTX
                                             : mscclc::jit::NvrtcOutput::CUBIN;
  request.defines = *defines;
  mscclc::jit::NvrtcResult result = mscclc::jit::compileWithNvrtc(request);
  if (!result.ok) {
    emitError(program.getLoc())
        << "cannot emit " << (emitKind == EmitKind::PTX ? "ptx" : "cubin")
        << " for " << arch << ": " << result.log;
    return failure();
  }
  os << result.binary;
  return success();
}

/// Runs the compiler stages. Returns failure after an error (already
/// reported through the diagnostic engine).
LogicalResult compile(llvm::SourceMgr &sourceMgr, MLIRContext &ctx,
                      const mscclc::FrontendOptions &options,
                      llvm::raw_ostream &os) {
  // mscl IR (hand-written or from mscl-opt) skips the frontend.
  if (llvm::StringRef(inputFile).ends_with(".mlir")) {
    OwningOpRef<ModuleOp> parsed = parseSourceFile<ModuleOp>(sourceMgr, &ctx);
    if (!parsed)
      return failure();
    return emitModule(*parsed, os);
  }
  std::unique_ptr<mscclc::ast::Module> module =
      mscclc::parseProgram(sourceMgr, ctx);
  if (!module)
    return failure();
  if (emitKind == EmitKind::AST) {
    mscclc::dumpAST(*module, os);
    return success();
  }
  mscclc::CompileOptions compileOptions;
  compileOptions.frontend = options;
  compileOptions.optimize = !noPasses;
  compileOptions.staticProof =
      !noPasses && !skipStaticChecks && (staticChecks || !simulateFlag);
  compileOptions.acrossLaunches = !singleLaunch;
  compileOptions.validateTranslation = !skipTranslationValidation;
  compileOptions.verifyEachPass = verifyEach;
  compileOptions.maxProofChunks = maxProofChunks;
  // Reports when it is destroyed, after the pipeline ran.
  DefaultTimingManager timing;
  applyDefaultTimingManagerCLOptions(timing);
  TimingScope timingRoot = timing.getRootScope();
  OwningOpRef<ModuleOp> ir = mscclc::compileModule(
      *module, compileOptions, ctx, [&](PassManager &pm) {
        pm.enableTiming(timingRoot);
        return applyPassManagerCLOptions(pm);
      });
  if (!ir)
    return failure();
  return emitModule(*ir, os);
}

/// Shows each error once, and at most kMaxErrorsShown of them: a mistake in
/// a loop over 512 ranks is one message, not 512 (docs/language.md,
/// "Errors"). Registered after the printing handler, it sees every
/// diagnostic first and swallows repeats and those past the limit.
class ErrorLimiter {
public:
  static constexpr unsigned kMaxErrorsShown = 50;

  explicit ErrorLimiter(MLIRContext &ctx) : engine(ctx.getDiagEngine()) {
    id = engine.registerHandler([this](Diagnostic &diag) -> LogicalResult {
      if (diag.getSeverity() != DiagnosticSeverity::Error)
        return failure(); // for the next handler to print
      std::string key;
      llvm::raw_string_ostream os(key);
      os << diag.getLocation() << '\0' << diag.str();
      if (!seen.insert(key).second)
        return success();
      if (++shown <= kMaxErrorsShown)
        return failure();
      ++hidden;
      return success();
    });
  }
  ~ErrorLimiter() {
    engine.eraseHandler(id);
    if (hidden)
      llvm::errs() << "mscclc: " << hidden << " more error"
                   << (hidden == 1 ? "" : "s") << " not shown (at most "
                   << kMaxErrorsShown << " are)\n";
  }

private:
  DiagnosticEngine &engine;
  DiagnosticEngine::HandlerID id;
  llvm::StringSet<> seen;
  unsigned shown = 0, hidden = 0;
};

/// Refuses option values out of range, and options the chosen output does
/// not use (a --dtype that --emit=plan would ignore is a mistake, not a
/// setting). Prints one line per problem; false if there was any.
bool checkOptions() {
  bool ok = true;
  auto error = [&](const llvm::Twine &message) {
    llvm::errs() << "mscclc: error: " << message << "\n";
    ok = false;
  };
  if (ranks < 1 || ranks > kMaxRanks)
    error("--ranks must be between 1 and " + llvm::Twine(kMaxRanks));
  if (instances < 1 || instances > kMaxInstances)
    error("--instances must be between 1 and " + llvm::Twine(kMaxInstances));
  if (gpusPerNode < 0 || gpusPerNode > kMaxRanks)
    error("--gpus-per-node must be between 1 and " + llvm::Twine(kMaxRanks) +
          " (0: all ranks on one node)");
  if (threadsPerBlock < 32 || threadsPerBlock > 1024 ||
      threadsPerBlock % 32 != 0)
    error("--threads-per-block must be a multiple of 32 from 32 to 1024, not " +
          llvm::Twine(threadsPerBlock.getValue()));
  if (!mscclc::sim::parseDataType(dtype))
    error("unknown --dtype '" + dtype + "' (accepted: " +
          mscclc::sim::acceptedDataTypes() + ")");
  if (!mscclc::sim::parseReduceKind(redop))
    error("unknown --redop '" + redop + "' (accepted: " +
          mscclc::sim::acceptedReduceKinds() + ")");
  if (simSchedules < 1 || simSchedules > kMaxSchedules)
    error("--schedules must be between 1 and " + llvm::Twine(kMaxSchedules));
  if (maxProofChunks < 1 || maxProofChunks > kMaxProofChunks)
    error("--max-proof-chunks must be between 1 and " +
          llvm::Twine(kMaxProofChunks));

  // Which options the output uses.
  bool kernelBuild = !simulateFlag && (emitKind == EmitKind::PTX ||
                                       emitKind == EmitKind::CUBIN ||
                                       emitKind == EmitKind::HSACO);
  auto onlyWith = [&](const cl::Option &option, bool used,
                      llvm::StringRef where) {
    if (option.getNumOccurrences() && !used)
      error("--" + option.ArgStr + " applies to " + where + " only");
  };
  onlyWith(arch, kernelBuild, "--emit=ptx|cubin|hsaco");
  onlyWith(kernelRank, kernelBuild, "--emit=ptx|cubin|hsaco");
  onlyWith(dtype, kernelBuild || simulateFlag,
           "--emit=ptx|cubin|hsaco and --simulate");
  onlyWith(redop, kernelBuild || simulateFlag,
           "--emit=ptx|cubin|hsaco and --simulate");
  onlyWith(threadsPerBlock,
           !simulateFlag &&
               (emitKind == EmitKind::Plan || emitKind == EmitKind::Bundle),
           "--emit=plan|bundle");
  onlyWith(embedHeaders,
           !simulateFlag &&
               (emitKind == EmitKind::CUDA || emitKind == EmitKind::HIP),
           "--emit=cuda|hip");
  // (std::addressof: cl::list overloads operator&.)
  const cl::Option *simulateOnly[] = {
      &simSeed,      &simSchedules, std::addressof(simBytes),
      &simTrace,     &simCostModel, std::addressof(simCost)};
  for (const cl::Option *option : simulateOnly)
    onlyWith(*option, simulateFlag, "--simulate");
  if (kernelBuild && arch.getNumOccurrences()) {
    std::string parsed;
    bool amd = emitKind == EmitKind::HSACO;
    if (amd ? !mscclc::jit::isGfxArch(arch)
            : !mscclc::jit::parseArch(arch, &parsed))
      error("--arch '" + arch + "' is not " +
            (amd ? "an AMDGPU architecture (gfx90a, gfx942)"
                 : "an NVIDIA architecture (sm_XX, sm_XXa or a number such "
                   "as 90)"));
  }
  return ok;
}

} // namespace

void mscclc::tools::registerDriverOptions() {
  cl::SetVersionPrinter(printVersion);
  // MLIR's pass-manager and printing options (--mlir-print-ir-after-all,
  // --mlir-timing, ...) work as in mscl-opt; --help lists mscclc's own.
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  registerMLIRContextCLOptions();
  registerAsmPrinterCLOptions();
  cl::HideUnrelatedOptions(mscclcCategory);
}

const char *const mscclc::tools::kDriverOverview =
    "mscclc: compiles .mscl collective communication algorithms\n";

int mscclc::tools::runDriver() {
  if (!checkOptions())
    return 1;
  auto parsedDefines = parseDefines();
  if (!parsedDefines)
    return 1;
  mscclc::FrontendOptions options;
  options.ranks = ranks;
  if (gpusPerNode > 0)
    options.gpusPerNode = gpusPerNode.getValue();
  options.instances = instances;
  options.defines = *parsedDefines;

  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input = mscclc::tools::readInputFile(
      inputFile, "source", maxInputBytes, &errorMessage);
  if (!input) {
    llvm::errs() << "mscclc: error: " << errorMessage << "\n";
    return 1;
  }
  if (!mscclc::tools::checkSourceText(*input, &errorMessage)) {
    llvm::errs() << errorMessage << "\n";
    return 1;
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFile, &errorMessage);
  if (!output) {
    llvm::errs() << "mscclc: error: " << errorMessage << "\n";
    return 1;
  }

  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  MLIRContext ctx;
  ctx.getOrLoadDialect<mscl::MsclDialect>();
  ctx.printOpOnDiagnostic(false);

  if (verifyDiagnostics) {
    SourceMgrDiagnosticVerifierHandler handler(sourceMgr, &ctx);
    (void)compile(sourceMgr, ctx, options, output->os());
    return failed(handler.verify()) ? 1 : 0;
  }
  SourceMgrDiagnosticHandler handler(sourceMgr, &ctx);
  ErrorLimiter limiter(ctx);
  if (failed(compile(sourceMgr, ctx, options, output->os())))
    return 1;
  output->keep();
  return 0;
}
