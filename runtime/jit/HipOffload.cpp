//===- HipOffload.cpp - HIP code objects through hipcc or clang ---------===//
//
// Each compiler runs as a child process in a fresh temporary directory that
// holds the source and the embedded device headers; its output and the
// code object are read back and the directory removed.
//
//===----------------------------------------------------------------------===//

#include "mscclc/jit/HipOffload.h"
#include "mscclc/jit/Nvrtc.h"
#include "mscclc/runtime/Settings.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>

extern char **environ;

namespace mscclc::jit {
namespace fs = std::filesystem;
namespace {

std::string readFile(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// A temporary directory, removed with everything in it.
class TempDir {
public:
  TempDir() {
    std::string pattern =
        (fs::temp_directory_path() / "mscclc-hip-XXXXXX").string();
    if (mkdtemp(pattern.data()))
      path = pattern;
  }
  ~TempDir() {
    if (!path.empty()) {
      std::error_code ignored;
      fs::remove_all(path, ignored);
    }
  }
  fs::path path;
};

/// Runs argv[0] (looked up in PATH) with stdout and stderr to `logPath`.
/// Returns the exit status, or -1 with `why` set when it did not start.
int run(const std::vector<std::string> &args, const fs::path &logPath,
        std::string *why) {
  std::vector<char *> argv;
  for (const std::string &a : args)
    argv.push_back(const_cast<char *>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, logPath.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  int err =
      posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0) {
    *why = std::string("cannot run ") + args[0] + ": " + std::strerror(err);
    return -1;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/// The command of one compiler for `arch`, without input and output.
std::vector<std::string> hipccCommand(const std::string &arch) {
  return {rt::get(rt::setting::Hipcc), "--offload-arch=" + arch,
          "--cuda-device-only"};
}

std::vector<std::string> clangCommand(const std::string &arch) {
  std::vector<std::string> cmd = {
      rt::get(rt::setting::HipClang), "-x", "hip",
      "--offload-arch=" + arch, "--offload-device-only",
      "-mcode-object-version=5",
      // ROCm 5.2's headers read it; clang 22 no longer predefines it. Every
      // gfx9 data-centre GPU runs wavefronts of 64.
      "-D__AMDGCN_WAVEFRONT_SIZE=64", "-nogpulib"};
  fs::path libs = rt::get(rt::setting::RocmDeviceLibs);
  for (const char *lib : {"hip", "ockl", "opencl", "oclc_abi_version_500",
                          "oclc_wavefrontsize64_on"})
    cmd.insert(cmd.end(), {"-Xclang", "-mlink-builtin-bitcode", "-Xclang",
                           (libs / (std::string(lib) + ".bc")).string()});
  return cmd;
}

} // namespace

bool isGfxArch(const std::string &arch) {
  if (arch.size() < 5 || arch.compare(0, 3, "gfx") != 0)
    return false;
  for (size_t i = 3; i < arch.size(); ++i)
    if (!std::isxdigit(static_cast<unsigned char>(arch[i])))
      return false;
  return true;
}

HipOffloadResult compileWithHipOffload(const HipOffloadRequest &request) {
  HipOffloadResult result;
  if (!isGfxArch(request.arch)) {
    result.log = "'" + request.arch + "' is not an AMDGPU processor (gfx...)";
    return result;
  }
  TempDir dir;
  if (dir.path.empty()) {
    result.log = std::string("cannot create a temporary directory: ") +
                 std::strerror(errno);
    return result;
  }
  for (const DeviceHeader &h : deviceHeaders()) {
    fs::path header = dir.path / "include" / h.name;
    fs::create_directories(header.parent_path());
    std::ofstream(header, std::ios::binary) << h.text;
  }
  const fs::path source = dir.path / "program.hip";
  const fs::path object = dir.path / "program.hsaco";
  const fs::path logPath = dir.path / "log";
  std::ofstream(source, std::ios::binary) << request.source;
  for (std::vector<std::string> cmd :
       {hipccCommand(request.arch), clangCommand(request.arch)}) {
    for (const std::string &arg :
         {std::string("-std=c++17"), std::string("--no-gpu-bundle-output"),
          "-I" + (dir.path / "include").string()})
      cmd.push_back(arg);
    cmd.insert(cmd.end(), request.defines.begin(), request.defines.end());
    for (const std::string &arg : {std::string("-c"), source.string(),
                                   std::string("-o"), object.string()})
      cmd.push_back(arg);
    std::string why;
    int status = run(cmd, logPath, &why);
    if (status == 0 && fs::exists(object)) {
      result.ok = true;
      result.binary = readFile(object);
      result.log.clear();
      return result;
    }
    result.log += cmd[0] + ": " +
                  (status < 0 ? why + "\n"
                              : "exit " + std::to_string(status) + "\n" +
                                    readFile(logPath));
  }
  return result;
}

} // namespace mscclc::jit
