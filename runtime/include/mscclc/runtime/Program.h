//===- Program.h - A compiled program: CUDA source + plan -----*- C++ -*-===//
//
// A Program is what `mscclc --emit=cuda` and `--emit=plan` produced for one
// algorithm and rank count. The runtime never links MLIR: it runs the
// `mscclc` binary (MSCCLC_COMPILER, else next to this library, else PATH)
// and keeps its two outputs. Data type and reduction operator are chosen
// per run; each (architecture, dtype, op) is compiled once with NVRTC
// (through the on-disk cache) and kept in memory.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_PROGRAM_H
#define MSCCLC_RUNTIME_PROGRAM_H

#include "mscclc/runtime/Loader.h"
#include "mscclc/runtime/Plan.h"

#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace mscclc::rt {

struct CompilerOptions {
  int ranks = 0;
  int gpusPerNode = 0;  ///< 0: the compiler's default
  int instances = 0;    ///< 0: the compiler's default
  std::vector<std::pair<std::string, long long>> defines;
  std::vector<std::string> extraArgs;
  std::string compiler; ///< explicit path; empty: search
};

/// Finds the mscclc binary (MSCCLC_COMPILER, next to the library, PATH).
Status findCompiler(const std::string &explicitPath, std::string *path);
/// The first mscclc in the absolute directories of `pathList` (PATH's
/// form) that no other user can change; false when there is none.
bool findCompilerOnPath(const std::string &pathList, std::string *path);

/// Runs `compiler args...`, capturing stdout into *out and stderr into *err.
Status runProcess(const std::string &compiler,
                  const std::vector<std::string> &args, std::string *out,
                  std::string *err, int *exitCode);

class Program {
public:
  /// Compiles an .mscl file with the mscclc binary.
  static Status compileFile(const std::string &path,
                            const CompilerOptions &options,
                            std::unique_ptr<Program> *out);
  /// Compiles .mscl source text (written to a temporary file first, named
  /// `fileName` in a temporary directory when given: the generated source
  /// names the file, so a fixed name gives the same source every time).
  static Status compileString(const std::string &source,
                              const CompilerOptions &options,
                              std::unique_ptr<Program> *out,
                              const std::string &fileName = "");
  /// Wraps already generated CUDA source and plan (ahead-of-time output,
  /// hand-written kernels).
  static Status fromGenerated(const std::string &cudaSource,
                              const std::string &planJson,
                              std::unique_ptr<Program> *out);
  /// Reads the compiler's `--emit=bundle` output (as bundleJson() writes
  /// it: the ahead-of-time store's program bundles).
  static Status fromBundle(const std::string &bundleJson,
                           std::unique_ptr<Program> *out);
  ~Program();

  uint64_t id() const { return id_; }
  const Plan &plan() const { return plan_; }
  const std::string &cudaSource() const { return cudaSource_; }
  const std::string &planJson() const { return planJson_; }
  /// CUDA source and plan as one `--emit=bundle` document, which
  /// fromBundle reads back into the same source and plan.
  std::string bundleJson() const;

  /// What is compiled for rank `rank`'s kernel (and the premul kernel) for
  /// (arch, dtype, redop): the one description of a kernel that the
  /// run-time loader and the ahead-of-time build (mscclc-aot) both use, so
  /// their keys agree.
  CompileRequest compileRequest(int arch, const std::string &dtype,
                                const std::string &redop, int rank) const;

  /// The cubin of compileRequest: from the ahead-of-time store (unless
  /// `allowAheadOfTime` is false: the store's cubin did not load), the
  /// cache, or NVRTC. Other ranks' kernels are left out: a process
  /// compiles only what it launches. Safe from several threads: each
  /// kernel is compiled once, and a caller asking for one that another
  /// thread is compiling waits for that compile.
  Status cubin(int arch, const std::string &dtype, const std::string &redop,
               int rank, std::string *out, CompileStats *stats = nullptr,
               bool allowAheadOfTime = true);

  /// The operator a kernel is compiled for: avg and premulsum run the sum
  /// kernel, which scales its own result (avg), or with a pre-multiply
  /// before it (premulsum).
  static std::string kernelRedop(const std::string &redop);

private:
  Program() = default;
  uint64_t id_ = 0;
  Plan plan_;
  std::string cudaSource_;
  std::string planJson_;
  std::mutex mutex_;
  struct Cubin {
    std::string binary;
    KernelOrigin origin;
  };
  std::map<std::string, Cubin> cubins_;
  /// Compiles under way (their key, without the lock held).
  struct Compiled {
    Status status;
    std::string binary;
    CompileStats stats;
  };
  std::map<std::string, std::shared_future<Compiled>> compiling_;
};

} // namespace mscclc::rt

#endif // MSCCLC_RUNTIME_PROGRAM_H
