//===- StdlibPrograms.h - Stdlib selection on a communicator --*- C++ -*-===//
//
// What mscclcRunCollective needs beyond the selection model: where the
// stdlib lives, the process's table (loaded once), the agreement of all
// ranks on table and shape (exchanged at communicator set-up), and the
// compiled programs (one per algorithm, params, rank count, node shape and
// in-place-ness, shared by every communicator of the process; NVRTC output
// is cached on disk by Program as always). A program's bundle (CUDA source
// and plan) comes from the ahead-of-time store (AotStore.h) where the build
// shipped it, named by stdlibProgramKey; else the mscclc compiler runs.
//
// The stdlib directory: MSCCLC_STDLIB_DIR, else `../share/mscclc/stdlib`
// beside libmscclc.so (installed), else the source tree's stdlib/ (build
// tree use). The table: MSCCLC_SELECTION_TABLE, else <stdlib>/selection.json;
// the catalog is always <stdlib>/algorithms.json.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_STDLIBPROGRAMS_H
#define MSCCLC_RUNTIME_STDLIBPROGRAMS_H

#include "mscclc/runtime/Selection.h"

#include <cstdint>
#include <atomic>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

namespace mscclc::rt {

class Communicator;
class Program;
struct CompilerOptions;

/// A resolved call: the selection and, unless it is the builtin copy or the
/// count is 0, its compiled program.
struct StdlibChoice {
  Selection selection;
  Program *program = nullptr;
  /// Plan::stagedByStdlib: it runs on the executor's registered staging
  /// buffers (Executor.h), never on the caller's, so it is the out-of-place
  /// variant even for an in-place call.
  bool staged = false;
  /// The program for the call's own layout (in place or not), which runs
  /// on the caller's buffers (mscclcRunCollectiveDirect); `program` itself
  /// when the choice is not staged.
  Program *directProgram = nullptr;
};

/// Per communicator: what every rank agreed on at set-up.
struct StdlibState {
  /// Ok when every rank loaded the same table (and catalog); else the
  /// reason (Unsupported) every stdlib call reports.
  Status agreed = Status(Code::Internal, "stdlib selection was not set up");
  const SelectionTable *table = nullptr;
  int gpusPerNode = 1; ///< ranks per node, the same on every rank
  int nnodes = 1;
  int arch = 0;        ///< rank 0's compute capability (all ranks use it)
  /// The most thread blocks a stdlib kernel may use per rank, 0 for no
  /// limit: the smallest any rank set (mscclcCommSetMaxBlocks).
  std::atomic<int> maxBlocks{0};

  /// Calls resolved before, so a repeated call costs one lookup instead of
  /// a table walk and a program-cache lookup. Entries are never removed
  /// (returned pointers stay valid); past kMemoEntries new calls are
  /// resolved without being remembered.
  static constexpr size_t kMemoEntries = 4096;
  std::mutex memoMutex;
  /// Keyed by the query and the block limit it was resolved under.
  std::map<std::tuple<int, uint64_t, std::string, std::string, int, bool, int>,
           StdlibChoice>
      memo;
};

/// The stdlib directory (see above).
Status stdlibDir(std::string *out);

/// The process's table, loaded at the first call (its error is kept).
Status processSelectionTable(const SelectionTable **out);

/// Collective over the bootstrap: exchanges table digest, node shape and
/// architecture. Fails only when the bootstrap does; disagreement is
/// recorded in state->agreed.
Status stdlibSetUp(Communicator &comm, StdlibState *state);

/// `text` (an .mscl file of `dir`) with `inplace` added to its algorithm
/// header and its relative imports made absolute: the in-place variant,
/// compiled from a temporary file.
Status stdlibInPlaceSource(const std::string &text, const std::string &dir,
                           const std::string &file, std::string *out);

/// The name of a stdlib program in the ahead-of-time store (64 hex
/// digits): SHA-256 over every .mscl file of the stdlib directory `dir`
/// (names and text, not where it lies: the build tree's and the installed
/// stdlib agree), the algorithm, in place or not, and the compiler options
/// that shape its output (ranks, GPUs per node, instances, params). Needs
/// neither the compiler nor NVRTC. The bundle under it is the output of the
/// compiler the library was built with.
Status stdlibProgramKey(const std::string &dir, const CompilerOptions &options,
                        const std::string &algorithm, bool inPlace,
                        std::string *key);

struct StdlibProgramEntry {
  std::string key;  ///< stdlibProgramKey
  std::string what; ///< "allreduce_1pa instances=1 in place, 2 ranks"
  const Program *program;
};

/// Every stdlib program this process holds (compiled or from the store):
/// what mscclc-aot ships as bundles. That includes programs a call needs
/// without launching them (the in-place variant whose plan says the call
/// runs staged, out of place).
std::vector<StdlibProgramEntry> stdlibPrograms();

/// What each rank contributes to the agreement (exchanged as bytes).
struct StdlibPeerInfo {
  char digest[64];     ///< the table's digest (hex), zeros if not loaded
  int32_t gpusPerNode; ///< ranks on this rank's host; -1: not a regular block
  int32_t arch;
  int32_t loaded;
};

/// Decides `state` from every rank's info (what stdlibSetUp does after the
/// exchange; separate so that tests need no communicator): rank 0's
/// architecture, one node shape, and a refusal naming both hashes when any
/// rank's table differs from ours or failed to load.
void stdlibAgree(const std::vector<StdlibPeerInfo> &all, int me,
                 const Status &loaded, const SelectionTable *table,
                 StdlibState *state);

/// Selects for `q` and, where a program is needed, compiles it
/// (stdlibProgram), remembering the result in state->memo.
Status stdlibResolve(StdlibState &state, const SelectionQuery &q,
                     const StdlibChoice **out);

/// The compiled program for `sel` (never the builtin copy) and `q`,
/// compiled at the first request in this process. Checks that the
/// program computes what the query asks (collective, in place, root,
/// dtype, op, NCCL's buffer counts); a mismatch is Unsupported, never a
/// wrong result.
Status stdlibProgram(const StdlibState &state, const SelectionQuery &q,
                     const Selection &sel, Program **out);

} // namespace mscclc::rt

#endif // MSCCLC_RUNTIME_STDLIBPROGRAMS_H
