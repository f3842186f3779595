//===- InputFiles.h - Reading the files mscclc is given, within bounds ---===//
//
// The source and the cost model come from the user's command line, so they
// may be anything a path can name: a FIFO, /dev/zero, a directory, a file of
// gigabytes. They are read as regular files (or standard input, "-") of at
// most a stated number of bytes; anything else is one clear error.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_TOOLS_INPUTFILES_H
#define MSCCLC_TOOLS_INPUTFILES_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>
#include <string>

namespace mscclc::tools {

/// The whole of `path` ("-": standard input), a regular file of at most
/// `maxBytes` bytes; nullptr and `*error` (naming the file as `what`, the
/// limit and `--max-input-bytes`, which raises it) otherwise.
std::unique_ptr<llvm::MemoryBuffer> readInputFile(llvm::StringRef path,
                                                  llvm::StringRef what,
                                                  uint64_t maxBytes,
                                                  std::string *error);

/// Longest source line mscclc reads: every diagnostic shows its line, and a
/// line of megabytes would make one error a wall of text.
constexpr size_t kMaxSourceLineBytes = 10000;

/// Whether `source` is text mscclc shows safely in diagnostics: lines of at
/// most kMaxSourceLineBytes, no control characters but tab, carriage return
/// and newline (a diagnostic echoes the line to the terminal, and escape
/// sequences would run there). Otherwise false and `*error`, a
/// `path:line:col: error: ...` line.
bool checkSourceText(const llvm::MemoryBuffer &source, std::string *error);

} // namespace mscclc::tools

#endif // MSCCLC_TOOLS_INPUTFILES_H
