//===- Frontend.cpp - Entry points: files, imports, evaluation ------------===//
//
// Imports are resolved relative to the importing file and loaded into the
// caller's SourceMgr, so diagnostics in imported files print with their
// source lines too. Each file is read once (identified by its real path);
// a file that imports one of the files still being loaded closes a cycle,
// which is an error.
//
//===----------------------------------------------------------------------===//

#include "mscclc/Frontend/Frontend.h"

#include "Evaluator.h"

#include "mscclc/Frontend/Parser.h"
#include "mscclc/Frontend/Sema.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

using namespace mscclc;

namespace {

/// Deepest chain of imports; a longer one is almost certainly generated.
constexpr unsigned kMaxImportDepth = 64;
/// Largest file an import reads (the stdlib's largest is a few KiB).
constexpr uint64_t kMaxImportBytes = uint64_t(16) << 20;

class ImportLoader {
public:
  ImportLoader(llvm::SourceMgr &sm, DiagReporter &diag, ast::Module &module)
      : sm(sm), diag(diag), module(module) {}

  /// Parses buffer `id`, then the files it imports (before it in the
  /// module, so declarations come in dependency order).
  void load(unsigned id, const std::string &canonical);

private:
  void loadImport(const ast::ImportDecl &imp, llvm::StringRef importer);

  llvm::SourceMgr &sm;
  DiagReporter &diag;
  ast::Module &module;
  llvm::StringSet<> done;
  std::vector<std::string> stack; // canonical paths being loaded
  std::vector<std::string> shown; // their buffer names, for messages
};

std::string canonicalPath(llvm::StringRef path) {
  llvm::SmallString<256> real;
  if (llvm::sys::fs::real_path(path, real))
    return path.str();
  return std::string(real);
}

} // namespace

void ImportLoader::load(unsigned id, const std::string &canonical) {
  const llvm::MemoryBuffer *buf = sm.getMemoryBuffer(id);
  std::string path = buf->getBufferIdentifier().str();
  unsigned before = diag.errorCount();
  std::unique_ptr<ast::SourceFile> file =
      parseSourceFile(buf->getBuffer(), path, diag);
  stack.push_back(canonical);
  shown.push_back(path);
  // A file with syntax errors may have garbled import paths; following them
  // would only add noise.
  if (diag.errorCount() == before) {
    for (const ast::DeclPtr &decl : file->decls) {
      if (diag.limitReached())
        break;
      if (auto *imp = llvm::dyn_cast<ast::ImportDecl>(decl.get()))
        loadImport(*imp, path);
    }
  }
  stack.pop_back();
  shown.pop_back();
  done.insert(canonical);
  module.files.push_back(std::move(file));
}

void ImportLoader::loadImport(const ast::ImportDecl &imp,
                              llvm::StringRef importer) {
  llvm::SmallString<256> resolved;
  if (llvm::sys::path::is_absolute(imp.name)) {
    resolved = imp.name;
  } else {
    resolved = llvm::sys::path::parent_path(importer);
    llvm::sys::path::append(resolved, imp.name);
  }
  std::string canonical = canonicalPath(resolved);
  for (size_t i = 0; i < stack.size(); ++i) {
    if (stack[i] != canonical)
      continue;
    std::string cycle;
    for (size_t j = i; j < shown.size(); ++j)
      cycle += shown[j] + " -> ";
    diag.error(imp.pathLoc, "import cycle: " + cycle + resolved);
    return;
  }
  if (done.contains(canonical))
    return;
  if (stack.size() >= kMaxImportDepth) {
    diag.error(imp.pathLoc, "imports are nested more than " +
                                llvm::Twine(kMaxImportDepth) + " deep");
    return;
  }
  // Only regular files: reading a device (/dev/zero, /dev/stdin) or a FIFO
  // never ends, and a file that large is no source.
  llvm::sys::fs::file_status status;
  if (!llvm::sys::fs::status(resolved, status) &&
      !llvm::sys::fs::is_regular_file(status) &&
      !llvm::sys::fs::is_directory(status)) {
    diag.error(imp.pathLoc, "cannot import '" + resolved +
                                "': not a regular file");
    return;
  }
  if (llvm::sys::fs::is_regular_file(status) &&
      status.getSize() > kMaxImportBytes) {
    diag.error(imp.pathLoc, "cannot import '" + resolved + "': larger than " +
                                llvm::Twine(kMaxImportBytes >> 20) + " MiB");
    return;
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buf =
      llvm::MemoryBuffer::getFile(resolved, /*IsText=*/true);
  if (!buf) {
    diag.error(imp.pathLoc, "cannot open imported file '" + resolved +
                                "': " + buf.getError().message());
    return;
  }
  // Record where the import is so SourceMgr can show "included from".
  llvm::SMLoc includeLoc;
  for (unsigned i = 1; i <= sm.getNumBuffers(); ++i) {
    if (sm.getMemoryBuffer(i)->getBufferIdentifier() == importer) {
      includeLoc = sm.FindLocForLineAndColumn(i, imp.pathLoc.getLine(),
                                              imp.pathLoc.getColumn());
      break;
    }
  }
  unsigned id = sm.AddNewSourceBuffer(std::move(*buf), includeLoc);
  load(id, canonical);
}

std::unique_ptr<ast::Module> mscclc::parseProgram(llvm::SourceMgr &sourceMgr,
                                                  mlir::MLIRContext &ctx) {
  DiagReporter diag(ctx);
  auto module = std::make_unique<ast::Module>();
  unsigned mainId = sourceMgr.getMainFileID();
  if (mainId == 0 || mainId > sourceMgr.getNumBuffers()) {
    diag.error(mlir::UnknownLoc::get(&ctx), "no input file");
    return nullptr;
  }
  std::string mainPath =
      sourceMgr.getMemoryBuffer(mainId)->getBufferIdentifier().str();
  ImportLoader(sourceMgr, diag, *module).load(mainId, canonicalPath(mainPath));
  if (diag.errorCount() != 0)
    return nullptr;
  if (!checkModule(*module, diag))
    return nullptr;
  return module;
}

std::optional<Program> mscclc::evaluateProgram(const ast::Module &module,
                                               const FrontendOptions &opts,
                                               mlir::MLIRContext &ctx) {
  DiagReporter diag(ctx);
  return detail::Evaluator(module, opts, diag).run();
}
