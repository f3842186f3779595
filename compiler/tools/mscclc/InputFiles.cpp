//===- InputFiles.cpp - Reading the files mscclc is given, within bounds -===//

#include "InputFiles.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"

using namespace llvm;

namespace mscclc::tools {
namespace {

std::string tooLarge(StringRef what, StringRef path, uint64_t maxBytes) {
  return (what + " '" + path + "' is larger than " + Twine(maxBytes) +
          " bytes (--max-input-bytes raises the limit)")
      .str();
}

/// Reads `fd` to its end, or up to one byte past `maxBytes`.
bool readBounded(sys::fs::file_t fd, uint64_t maxBytes,
                 SmallVectorImpl<char> &out, std::string *error) {
  for (;;) {
    size_t chunk = 1 << 16;
    size_t at = out.size();
    out.resize_for_overwrite(at + chunk);
    Expected<size_t> got = sys::fs::readNativeFile(
        fd, MutableArrayRef<char>(out.data() + at, chunk));
    if (!got) {
      *error = toString(got.takeError());
      return false;
    }
    out.truncate(at + *got);
    if (*got == 0 || out.size() > maxBytes)
      return true;
  }
}

} // namespace

std::unique_ptr<MemoryBuffer> readInputFile(StringRef path, StringRef what,
                                            uint64_t maxBytes,
                                            std::string *error) {
  auto fail = [&](const Twine &message) -> std::unique_ptr<MemoryBuffer> {
    *error = message.str();
    return nullptr;
  };
  if (path == "-") {
    // Standard input may be a pipe that never ends: read at most one byte
    // past the limit.
    SmallVector<char, 0> bytes;
    std::string reason;
    if (!readBounded(sys::fs::getStdinHandle(), maxBytes, bytes, &reason))
      return fail("cannot read " + what + " from standard input: " + reason);
    if (bytes.size() > maxBytes)
      return fail(tooLarge(what, "<stdin>", maxBytes));
    return MemoryBuffer::getMemBufferCopy(StringRef(bytes.data(), bytes.size()),
                                          "<stdin>");
  }
  auto unreadable = [&](const Twine &reason) {
    return fail("cannot read " + what + " '" + path + "': " + reason);
  };
  // The path is asked first, since opening a FIFO waits for a writer; then
  // the open file, since the path may name another file by then.
  sys::fs::file_status pathStatus;
  if (std::error_code ec = sys::fs::status(path, pathStatus))
    return unreadable(ec.message());
  if (pathStatus.type() != sys::fs::file_type::regular_file)
    return fail(what + " '" + path + "' is not a regular file");
  Expected<sys::fs::file_t> fd = sys::fs::openNativeFileForRead(path);
  if (!fd)
    return unreadable(toString(fd.takeError()));
  auto close = make_scope_exit([&] { sys::fs::closeFile(*fd); });
  sys::fs::file_status status;
  if (std::error_code ec = sys::fs::status(*fd, status))
    return unreadable(ec.message());
  if (status.type() != sys::fs::file_type::regular_file)
    return fail(what + " '" + path + "' is not a regular file");
  if (status.getSize() > maxBytes)
    return fail(tooLarge(what, path, maxBytes));
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer =
      MemoryBuffer::getOpenFile(*fd, path, status.getSize());
  if (!buffer)
    return unreadable(buffer.getError().message());
  return std::move(*buffer);
}

bool checkSourceText(const MemoryBuffer &source, std::string *error) {
  StringRef text = source.getBuffer();
  size_t line = 1, lineStart = 0;
  auto fail = [&](size_t at, const Twine &message) {
    *error = (source.getBufferIdentifier() + ":" + Twine(line) + ":" +
              Twine(at - lineStart + 1) + ": error: " + message)
                 .str();
    return false;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      ++line;
      lineStart = i + 1;
      continue;
    }
    if (i - lineStart >= kMaxSourceLineBytes)
      return fail(i, "source line longer than " + Twine(kMaxSourceLineBytes) +
                         " bytes");
    if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7f)
      return fail(i, "control character 0x" +
                         utohexstr(c, /*LowerCase=*/true,
                                   /*Width=*/2) +
                         " in the source");
  }
  return true;
}

} // namespace mscclc::tools
