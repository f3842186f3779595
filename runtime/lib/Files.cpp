//===- Files.cpp - The few file-system queries the runtime makes ----------===//

#include "mscclc/runtime/Files.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace mscclc::rt {

Status readFile(const std::string &path, std::string *out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return invalidArgument(
        fmt::format("cannot read {}: {}", path, strerror(errno)));
  std::stringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return Status::ok();
}

bool isRegularFile(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool isDirectory(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool isExecutableFile(const std::string &path) {
  return isRegularFile(path) && access(path.c_str(), X_OK) == 0;
}

} // namespace mscclc::rt
