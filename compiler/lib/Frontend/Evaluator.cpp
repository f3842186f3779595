//===- Evaluator.cpp - Setup, limits and results of the evaluation --------===//

#include "Evaluator.h"

#include "mscclc/Frontend/Sema.h"
#include "mscclc/floor/Shape.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"

using namespace mscclc;
using namespace mscclc::detail;

namespace {
Program emptyProgram(mlir::MLIRContext &ctx) {
  return Program{
      "", Collective::AllReduce,  false, 0, 0, 0, 1, 1, 0, 0, {}, {},
      {}, mlir::UnknownLoc::get(&ctx)};
}
} // namespace

Evaluator::Evaluator(const ast::Module &module, const FrontendOptions &opts,
                     DiagReporter &diag)
    : module(module), opts(opts), diag(diag), ctx(diag.getContext()),
      prog(emptyProgram(diag.getContext())) {}

//===----------------------------------------------------------------------===//
// Diagnostics and limits
//===----------------------------------------------------------------------===//

void Evaluator::error(mlir::Location loc, const llvm::Twine &msg) {
  if (!reported.insert(mlir::LocationAttr(loc)).second)
    return;
  if (callSites.empty())
    diag.error(loc, msg);
  else
    diag.error(loc, msg, callSites.back(), "in the call from here");
  if (diag.limitReached())
    stop = true;
}

void Evaluator::fatal(mlir::Location loc, const llvm::Twine &msg) {
  reported.erase(mlir::LocationAttr(
      loc)); // a limit must be reported even at a seen location
  error(loc, msg);
  stop = true;
}

bool Evaluator::step(mlir::Location loc) {
  if (stop)
    return false;
  if (++steps > kMaxSteps) {
    fatal(loc, "evaluation stopped after " + llvm::Twine(kMaxSteps) +
                   " steps (is a loop or the recursion unbounded?)");
    return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Setup
//===----------------------------------------------------------------------===//

bool Evaluator::checkOptions() {
  mlir::Location unknown = mlir::UnknownLoc::get(&ctx);
  bool ok = true;
  if (opts.ranks < 1 || opts.ranks > kMaxRanks) {
    diag.error(unknown, "--ranks must be between 1 and " +
                            llvm::Twine(kMaxRanks) + ", got " +
                            llvm::Twine(opts.ranks));
    return false;
  }
  ranks = opts.ranks;
  gpusPerNode = opts.gpusPerNode.value_or(ranks);
  if (gpusPerNode < 1 || ranks % gpusPerNode != 0) {
    diag.error(unknown, "--gpus-per-node " + llvm::Twine(gpusPerNode) +
                            " does not divide --ranks " + llvm::Twine(ranks));
    ok = false;
  }
  if (opts.instances < 1 || opts.instances > kMaxThreadBlocks) {
    diag.error(unknown, "--instances must be between 1 and " +
                            llvm::Twine(kMaxThreadBlocks) + ", got " +
                            llvm::Twine(opts.instances));
    ok = false;
  }
  if (!ok)
    return false;
  globals["nranks"] = Value::integer(ranks);
  globals["gpus_per_node"] = Value::integer(gpusPerNode);
  globals["nnodes"] = Value::integer(ranks / gpusPerNode);
  globals["instances"] = Value::integer(opts.instances);
  return true;
}

bool Evaluator::evalParams() {
  llvm::StringMap<int64_t> defines;
  for (const auto &[name, value] : opts.defines)
    defines[name] = value;
  llvm::StringMap<const ast::ParamDecl *> params;
  for (const auto &file : module.files)
    for (const ast::DeclPtr &decl : file->decls)
      if (auto *p = llvm::dyn_cast<ast::ParamDecl>(decl.get()))
        params[p->name] = p;
  bool ok = true;
  for (const auto &[name, value] : opts.defines) {
    if (!params.count(name)) {
      // The mistake is on the command line, about the program as a whole:
      // reported at the main file's start, with what it could have named.
      std::vector<std::string> names;
      for (const auto &entry : params)
        names.push_back(entry.getKey().str());
      llvm::sort(names);
      std::string message = "-D " + name + "=" + std::to_string(value) +
                            " names no parameter of this program";
      message += names.empty() ? std::string(" (it has none)")
                               : " (its parameters: " +
                                     llvm::join(names, ", ") + ")";
      diag.error(mlir::FileLineColLoc::get(&ctx, module.getMainFile().path, 1,
                                           1),
                 message);
      ok = false;
    }
  }
  if (!ok)
    return false;
  unsigned before = diag.errorCount();
  for (const auto &file : module.files) {
    for (const ast::DeclPtr &decl : file->decls) {
      auto *p = llvm::dyn_cast<ast::ParamDecl>(decl.get());
      if (!p)
        continue;
      auto it = defines.find(p->name);
      if (it != defines.end()) {
        globals[p->name] = Value::integer(it->second);
        continue;
      }
      std::optional<int64_t> v = evalInt(*p->value);
      globals[p->name] = v ? Value::integer(*v) : Value::poison();
    }
  }
  return diag.errorCount() == before && !stop;
}

bool Evaluator::evalHeader(const ast::AlgorithmDecl &algo) {
  prog.name = algo.name;
  prog.loc = algo.getLoc();
  // Sema has checked the name.
  collective = lookupCollective(algo.collective).value_or(Collective::Custom);
  int64_t root = 0, customIn = 0, customOut = 0;
  bool ok = true;
  for (const ast::AlgorithmOption &opt : algo.options) {
    if (opt.name == "inplace") {
      inPlace = true;
      continue;
    }
    std::optional<int64_t> v = evalInt(*opt.value);
    if (!v) {
      ok = false;
      continue;
    }
    auto inRange = [&](int64_t lo, int64_t hi, llvm::StringRef what) {
      if (*v >= lo && *v <= hi)
        return true;
      error(opt.value->getLoc(),
            "'" + opt.name + "' must be " + what + ", got " + llvm::Twine(*v));
      ok = false;
      return false;
    };
    if (opt.name == "chunks" &&
        inRange(1, kMaxBufferChunks / ranks,
                "between 1 and " + std::to_string(kMaxBufferChunks / ranks)))
      chunks = *v;
    else if (opt.name == "root" &&
             inRange(0, ranks - 1,
                     "a rank between 0 and " + std::to_string(ranks - 1)))
      root = *v;
    else if (opt.name == "input" &&
             inRange(1, kMaxBufferChunks,
                     "between 1 and " + std::to_string(kMaxBufferChunks)))
      customIn = *v;
    else if (opt.name == "output" &&
             inRange(1, kMaxBufferChunks,
                     "between 1 and " + std::to_string(kMaxBufferChunks)))
      customOut = *v;
  }
  if (!ok)
    return false;

  // NCCL's buffer sizes in chunks (mscclc/floor/Shape.h); custom
  // algorithms give their own.
  int64_t in = customIn, out = customOut;
  if (isStandardCollective(collective)) {
    in = int64_t(inputElements(collective, chunks, ranks));
    out = int64_t(outputElements(collective, chunks, ranks));
  }
  prog.collective = collective;
  prog.inPlace = inPlace;
  prog.root = root;
  prog.ranks = ranks;
  prog.gpusPerNode = gpusPerNode;
  prog.instances = opts.instances;
  prog.chunks = chunks;
  prog.inputChunks = in;
  prog.outputChunks = out;

  buffers.emplace_back("input", BufferInfo::Kind::Input, in);
  buffers.emplace_back("output", BufferInfo::Kind::Output, out);
  Value input, output;
  input.kind = output.kind = Value::Kind::Buffer;
  input.buffer = &buffers[0];
  output.buffer = &buffers[1];
  globals["input"] = input;
  globals["output"] = output;
  return true;
}

std::optional<Program> Evaluator::run() {
  if (!checkOptions())
    return std::nullopt;
  for (const auto &file : module.files)
    for (const ast::DeclPtr &decl : file->decls)
      if (auto *fn = llvm::dyn_cast<ast::FnDecl>(decl.get()))
        fns[fn->name] = fn;
  const ast::AlgorithmDecl *algo = findAlgorithm(module);
  if (!algo)
    return std::nullopt;
  // A property of the header's text, so parameters may depend on it too.
  globals["inplace"] = Value::integer(
      llvm::any_of(algo->options, [](const ast::AlgorithmOption &opt) {
        return opt.name == "inplace";
      }));
  if (!evalParams() || !evalHeader(*algo))
    return std::nullopt;
  blocks.resize(ranks);
  unsigned before = diag.errorCount();
  execBlock(algo->body);
  if (!stop)
    for (const auto &rankBlocks : blocks)
      for (const auto &[id, state] : rankBlocks)
        checkPacketReads(state.block.ops);
  if (diag.errorCount() != before || stop)
    return std::nullopt;
  return finish();
}

Program Evaluator::finish() {
  for (int64_t r = 0; r < ranks; ++r) {
    RankProgram rp;
    rp.rank = r;
    for (auto &[id, state] : blocks[r])
      rp.threadBlocks.push_back(std::move(state.block));
    prog.rankPrograms.push_back(std::move(rp));
  }
  return std::move(prog);
}
