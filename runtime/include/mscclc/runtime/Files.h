//===- Files.h - The few file-system queries the runtime makes ------------===//
//
// Reading a whole text file (a program, the stdlib's tables) and asking what
// a path names (finding the compiler and the stdlib).
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_FILES_H
#define MSCCLC_RUNTIME_FILES_H

#include "mscclc/runtime/Status.h"

#include <string>

namespace mscclc::rt {

/// The whole file; an error naming the path and the reason otherwise.
Status readFile(const std::string &path, std::string *out);
bool isRegularFile(const std::string &path);
bool isDirectory(const std::string &path);
bool isExecutableFile(const std::string &path);

} // namespace mscclc::rt

#endif // MSCCLC_RUNTIME_FILES_H
