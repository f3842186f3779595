//===- Program.cpp - Running the compiler, compiling its output -----------===//

#include "mscclc/runtime/Program.h"
#include "mscclc/runtime/Communicator.h"
#include "mscclc/runtime/Files.h"
#include "mscclc/runtime/Settings.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <fstream>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace mscclc::rt {

namespace {

std::atomic<uint64_t> nextProgramId{1};

std::string dirName(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

/// A temporary file removed on scope exit.
struct TempFile {
  std::string path;
  ~TempFile() {
    if (!path.empty())
      unlink(path.c_str());
  }
};

/// A private temporary directory, removed (with the one file that
/// compileString puts there) on scope exit.
struct TempDir {
  std::string path;
  ~TempDir() {
    if (!path.empty())
      rmdir(path.c_str());
  }
};

Status makeTempDir(TempDir *out) {
  std::string tmpl = get(setting::Tmpdir) + "/mscclc-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data()))
    return systemError(fmt::format("mkdtemp({}): {}", tmpl, strerror(errno)));
  out->path = buf.data();
  return Status::ok();
}

Status makeTemp(const char *suffix, TempFile *out) {
  std::string tmpl = get(setting::Tmpdir) + "/mscclc-XXXXXX" + suffix;
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  int fd = mkstemps(buf.data(), int(strlen(suffix)));
  if (fd < 0)
    return systemError(fmt::format("mkstemps({}): {}", tmpl, strerror(errno)));
  close(fd);
  out->path = buf.data();
  return Status::ok();
}

/// Splits the compiler's `--emit=bundle` output into its CUDA source and
/// its plan (as JSON text, for parsePlan).
Status splitBundle(const std::string &text, std::string *cuda,
                   std::string *plan) {
  nlohmann::json bundle =
      nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (bundle.is_discarded() || !bundle.is_object())
    return invalidArgument("the compiler's output is not a JSON object");
  auto format = bundle.find("format");
  auto version = bundle.find("version");
  if (format == bundle.end() || *format != "mscclc-bundle" ||
      version == bundle.end() || *version != 1)
    return invalidArgument(
        "the compiler's output is not an mscclc-bundle of version 1 (is "
        "MSCCLC_COMPILER an mscclc of the same release?)");
  auto planIt = bundle.find("plan");
  auto cudaIt = bundle.find("cuda");
  if (planIt == bundle.end() || !planIt->is_object())
    return invalidArgument("the bundle has no \"plan\" object");
  if (cudaIt == bundle.end() || !cudaIt->is_string())
    return invalidArgument("the bundle has no \"cuda\" string");
  *plan = planIt->dump();
  *cuda = cudaIt->get<std::string>();
  return Status::ok();
}

} // namespace

namespace {

/// A compiler the user named (an argument, MSCCLC_COMPILER): run even where
/// others could change it, since they chose it, but the log says so.
Status namedCompiler(const std::string &path, const std::string &named,
                     std::string *out) {
  if (!isExecutableFile(path))
    return invalidArgument(
        fmt::format("{} is not an executable file", named));
  Status trusted = checkTrustedFile(path, "the mscclc compiler");
  if (!trusted.isOk())
    MSCCLC_LOG(Warn, "{}; running it anyway, because {} names it",
               trusted.message(), named);
  *out = path;
  return Status::ok();
}

/// A compiler found by searching (beside the library, PATH): only one that
/// no other user can change, since nobody chose it.
bool searchedCompiler(const std::string &candidate, std::string *out) {
  if (!isExecutableFile(candidate))
    return false;
  Status trusted = checkTrustedFile(candidate, "the mscclc compiler");
  if (!trusted.isOk()) {
    MSCCLC_LOG(Warn, "{}; skipped (set MSCCLC_COMPILER to run it anyway)",
               trusted.message());
    return false;
  }
  *out = candidate;
  return true;
}

} // namespace

bool findCompilerOnPath(const std::string &pathList, std::string *path) {
  std::stringstream ss(pathList);
  std::string dir;
  // An empty entry, "." or any relative one is the working directory or
  // below it: whoever wrote the files there would choose the compiler.
  while (std::getline(ss, dir, ':'))
    if (!dir.empty() && dir[0] == '/' &&
        searchedCompiler(dir + "/mscclc", path))
      return true;
  return false;
}

Status findCompiler(const std::string &explicitPath, std::string *path) {
  if (!explicitPath.empty())
    return namedCompiler(explicitPath, "compiler " + explicitPath, path);
  if (std::string env = get(setting::Compiler); !env.empty())
    return namedCompiler(env, fmt::format("MSCCLC_COMPILER={}", env), path);
  // Next to this library: <prefix>/lib/libmscclc.so -> <prefix>/bin/mscclc.
  Dl_info info;
  if (dladdr(reinterpret_cast<void *>(&findCompiler), &info) && info.dli_fname) {
    std::string dir = dirName(info.dli_fname);
    for (const std::string &candidate :
         {dir + "/mscclc", dir + "/../bin/mscclc", dir + "/bin/mscclc"})
      if (searchedCompiler(candidate, path))
        return Status::ok();
  }
  if (std::optional<RawSetting> p = get(setting::Path);
      p && findCompilerOnPath(p->text, path))
    return Status::ok();
  return invalidArgument(
      "cannot find the mscclc compiler: set MSCCLC_COMPILER, install it next "
      "to libmscclc, or put it on PATH (searched candidates that other users "
      "can change are skipped, with a warning)");
}

Status runProcess(const std::string &compiler,
                  const std::vector<std::string> &args, std::string *out,
                  std::string *err, int *exitCode) {
  int outPipe[2], errPipe[2];
  if (pipe2(outPipe, O_CLOEXEC) != 0)
    return systemError(fmt::format("pipe: {}", strerror(errno)));
  if (pipe2(errPipe, O_CLOEXEC) != 0) {
    close(outPipe[0]);
    close(outPipe[1]);
    return systemError(fmt::format("pipe: {}", strerror(errno)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2);
  std::vector<char *> argv;
  argv.push_back(const_cast<char *>(compiler.c_str()));
  for (const std::string &a : args)
    argv.push_back(const_cast<char *>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, compiler.c_str(), &actions, nullptr, argv.data(),
                       environ);
  posix_spawn_file_actions_destroy(&actions);
  close(outPipe[1]);
  close(errPipe[1]);
  if (rc != 0) {
    close(outPipe[0]);
    close(errPipe[0]);
    return systemError(
        fmt::format("cannot run {}: {}", compiler, strerror(rc)));
  }
  // Read both pipes until they close, so a chatty compiler never blocks.
  pollfd fds[2] = {{outPipe[0], POLLIN, 0}, {errPipe[0], POLLIN, 0}};
  std::string *sinks[2] = {out, err};
  int open = 2;
  char buf[65536];
  while (open > 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR)
        continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !fds[i].revents)
        continue;
      ssize_t n = read(fds[i].fd, buf, sizeof(buf));
      if (n > 0) {
        sinks[i]->append(buf, size_t(n));
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open;
      }
    }
  }
  for (auto &f : fds)
    if (f.fd >= 0)
      close(f.fd);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  *exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return Status::ok();
}

Status Program::compileFile(const std::string &path,
                            const CompilerOptions &options,
                            std::unique_ptr<Program> *out) {
  if (options.ranks < 1)
    return invalidArgument("compile options need ranks >= 1");
  if (access(path.c_str(), R_OK) != 0)
    return invalidArgument(
        fmt::format("cannot read {}: {}", path, strerror(errno)));
  std::string compiler;
  MSCCLC_TRY(findCompiler(options.compiler, &compiler));
  std::vector<std::string> common = {path, "--ranks=" + std::to_string(options.ranks)};
  if (options.gpusPerNode > 0)
    common.push_back("--gpus-per-node=" + std::to_string(options.gpusPerNode));
  if (options.instances > 0)
    common.push_back("--instances=" + std::to_string(options.instances));
  for (const auto &d : options.defines)
    common.push_back("-D" + d.first + "=" + std::to_string(d.second));
  for (const std::string &a : options.extraArgs)
    common.push_back(a);

  // One run writes the CUDA and the plan, from one analysis of the program.
  std::vector<std::string> args = common;
  args.push_back("--emit=bundle");
  std::string output, err;
  int code = 0;
  auto started = std::chrono::steady_clock::now();
  MSCCLC_TRY(runProcess(compiler, args, &output, &err, &code));
  MSCCLC_LOG(Info, "ran the compiler {} for {} in {:.1f} ms", compiler, path,
             std::chrono::duration<double, std::milli>(
                 std::chrono::steady_clock::now() - started)
                 .count());
  if (code != 0) {
    while (!err.empty() && err.back() == '\n')
      err.pop_back();
    return Status(Code::CompileError,
                  fmt::format("mscclc failed (exit {}) for {}:\n{}", code, path,
                              err.empty() ? "(no diagnostics)" : err));
  }
  if (!err.empty())
    MSCCLC_LOG(Info, "mscclc: {}", err);
  std::string cuda, plan;
  MSCCLC_TRY(splitBundle(output, &cuda, &plan)
                 .context(fmt::format("reading the output of mscclc for {}",
                                      path)));
#if MSCCLC_TARGET_HIP
  // The bundle holds CUDA; the plan is the same for HIP, whose source takes
  // a second run (--emit=hip) of the same arguments.
  args.back() = "--emit=hip";
  output.clear(), err.clear();
  MSCCLC_TRY(runProcess(compiler, args, &output, &err, &code));
  if (code != 0 || output.empty())
    return Status(Code::CompileError,
                  fmt::format("mscclc --emit=hip failed (exit {}) for {}:\n{}",
                              code, path,
                              err.empty() ? "(no diagnostics)" : err));
  cuda = std::move(output);
#endif
  MSCCLC_TRY(fromGenerated(cuda, plan, out)
                 .context(fmt::format("loading the output of mscclc for {}",
                                      path)));
  if ((*out)->plan().ranks != options.ranks)
    return internalError(fmt::format("the plan is for {} ranks, {} were asked for",
                                (*out)->plan().ranks, options.ranks));
  return Status::ok();
}

Status Program::compileString(const std::string &source,
                              const CompilerOptions &options,
                              std::unique_ptr<Program> *out,
                              const std::string &fileName) {
  TempDir dir; // declared first: removed after the file in it
  TempFile tmp;
  if (fileName.empty()) {
    MSCCLC_TRY(makeTemp(".mscl", &tmp));
  } else {
    // The generated source names its file (comments per .mscl line): a
    // fixed name keeps it, and so its kernel keys, the same in every
    // process, and the build's ahead-of-time kernels apply.
    MSCCLC_TRY(makeTempDir(&dir));
    tmp.path = dir.path + "/" + fileName;
  }
  {
    std::ofstream f(tmp.path, std::ios::binary);
    f << source;
    if (!f)
      return systemError(fmt::format("cannot write {}", tmp.path));
  }
  return compileFile(tmp.path, options, out);
}

Status Program::fromGenerated(const std::string &cudaSource,
                              const std::string &planJson,
                              std::unique_ptr<Program> *out) {
  std::unique_ptr<Program> p(new Program());
  MSCCLC_TRY(parsePlan(planJson, &p->plan_));
  if (cudaSource.empty())
    return invalidArgument("the CUDA source is empty");
  MSCCLC_TRY(checkKernelsDefined(p->plan_, cudaSource));
  p->cudaSource_ = cudaSource;
  p->planJson_ = planJson;
  p->id_ = nextProgramId.fetch_add(1);
  *out = std::move(p);
  return Status::ok();
}

Status Program::fromBundle(const std::string &bundleJson,
                           std::unique_ptr<Program> *out) {
  std::string cuda, plan;
  MSCCLC_TRY(splitBundle(bundleJson, &cuda, &plan));
  return fromGenerated(cuda, plan, out);
}

std::string Program::bundleJson() const {
  nlohmann::json bundle;
  bundle["format"] = "mscclc-bundle";
  bundle["version"] = 1;
  // planJson_ passed parsePlan: it is JSON.
  bundle["plan"] = nlohmann::json::parse(planJson_, nullptr, false);
  bundle["cuda"] = cudaSource_;
  return bundle.dump();
}

Program::~Program() {
  for (Communicator *c : Communicator::live())
    c->dropExecutors(id_);
}

CompileRequest Program::compileRequest(int arch, const std::string &dtype,
                                      const std::string &redop,
                                      int rank) const {
  CompileRequest req;
  req.source = cudaSource_;
  req.name = plan_.name + (MSCCLC_TARGET_HIP ? ".hip" : ".cu");
  req.arch = arch;
  req.options = {"-DMSCCLC_DTYPE=" + dtype, "-DMSCCLC_REDOP=" + redop,
                 "-DMSCCLC_RANK=" + std::to_string(rank)};
  return req;
}

std::string Program::kernelRedop(const std::string &redop) {
  return redop == "avg" || redop == "premulsum" ? "sum" : redop;
}

Status Program::cubin(int arch, const std::string &dtype,
                      const std::string &redop, int rank, std::string *out,
                      CompileStats *stats, bool allowAheadOfTime) {
  std::string key = fmt::format("{}/{}/{}/{}", arch, dtype, redop, rank);
  // The compile this call waits for (another thread's), or the promise of
  // the one it runs itself.
  std::shared_future<Compiled> other;
  std::promise<Compiled> mine;
  // Without the store the key differs: a store cubin the driver refused is
  // compiled again (Executor), not handed back.
  std::string compileKey = allowAheadOfTime ? key : key + "/jit";
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = cubins_.find(key);
    if (it != cubins_.end() &&
        (allowAheadOfTime || it->second.origin != KernelOrigin::AheadOfTime)) {
      *out = it->second.binary;
      if (stats) {
        *stats = CompileStats();
        stats->origin = it->second.origin;
        stats->cacheHit = true;
      }
      return Status::ok();
    }
    auto running = compiling_.find(compileKey);
    if (running != compiling_.end())
      other = running->second;
    else
      compiling_[compileKey] = mine.get_future().share();
  }
  if (other.valid()) {
    const Compiled &c = other.get();
    MSCCLC_TRY(c.status);
    *out = c.binary;
    if (stats)
      *stats = c.stats;
    return Status::ok();
  }
  // Compiled without the lock: the ranks of one process (one thread each)
  // compile their kernels at once, which at 8 ranks is most of a first
  // call's time.
  Compiled c;
  AotStore store;
  KernelCache cache;
  if (allowAheadOfTime)
    c.status = AotStore::fromEnvironment(&store);
  if (c.status.isOk())
    c.status = KernelCache::fromEnvironment(&cache);
  if (c.status.isOk())
    c.status = compileCached(compileRequest(arch, dtype, redop, rank), store,
                             cache, &c.binary, &c.stats);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (c.status.isOk())
      cubins_[key] = {c.binary, c.stats.origin};
    compiling_.erase(compileKey);
  }
  mine.set_value(c);
  MSCCLC_TRY(c.status);
  *out = std::move(c.binary);
  if (stats)
    *stats = c.stats;
  return Status::ok();
}

} // namespace mscclc::rt
