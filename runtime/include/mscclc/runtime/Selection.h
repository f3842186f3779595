//===- Selection.h - Choosing a stdlib algorithm for a call ---*- C++ -*-===//
//
// The standard library (stdlib/) ships two JSON files:
//  - algorithms.json, the catalog: what each algorithm family can serve
//    (collective, rank and node counts, in place or not, dtypes, ops, which
//    `param`s a table may set). It mirrors the `require`s of the .mscl files
//    so that selection needs neither the compiler nor a GPU.
//  - selection.json, the table: entries keyed by collective, ranks, nodes,
//    GPU architecture and size range, giving algorithm, instances and params.
// A query is served by the first entry (in file order) whose keys match and
// whose algorithm supports the call; a call no entry serves is unsupported,
// with every reason in the message. One rank needs no algorithm: the
// builtin "copy" serves every collective there.
//
// Pure data: no CUDA, no files beyond load(), so unit tests sweep it freely.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_SELECTION_H
#define MSCCLC_RUNTIME_SELECTION_H

#include "mscclc/floor/Shape.h"
#include "mscclc/runtime/Limits.h"
#include "mscclc/runtime/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace mscclc::rt {

/// The collectives of mscclcCollective_t: the floor's standard ones
/// (mscclc/floor/Tables.h has their names, roots and operators,
/// mscclc/floor/Shape.h their buffer sizes).
using mscclc::Collective;

/// A standard collective of a name ("allreduce", ...; not `custom`, which
/// no selection table or C API call names).
bool parseCollective(const std::string &name, Collective *out);

struct SelectionQuery {
  Collective collective = Collective::AllReduce;
  int nranks = 1;
  int nnodes = 1;
  int arch = 90; ///< compute capability, major*10 + minor
  uint64_t count = 0;
  std::string dtype = "f32"; ///< plan names: f32, f16, bf16, ...
  std::string op = "sum";
  int root = 0;
  bool inPlace = false;
};

/// The size the table's ranges compare: bytes of the larger user buffer
/// (allreduce: count elements; allgather: nranks * count; ...).
uint64_t selectionBytes(const SelectionQuery &q);

/// One catalog entry: an algorithm family, one .mscl file.
struct AlgorithmInfo {
  std::string name; ///< file stem: stdlib/<name>.mscl
  Collective collective = Collective::AllReduce;
  int minRanks = 2;
  int maxRanks = limits::kMaxRanks;
  int minNodes = 1;
  int maxNodes = 1;          ///< 0: any
  bool inPlace = true;       ///< serves in-place calls (header `inplace` added)
  bool outOfPlace = true;
  std::vector<std::string> dtypes; ///< empty: every dtype
  std::vector<std::string> ops;    ///< empty: every op (reducing collectives)
  std::string rootParam;           ///< rooted collectives: the param set to root
  std::vector<std::string> params; ///< params a table entry may set
  int maxInstances = 64;
  uint64_t countMultiple = 1; ///< counts it serves are multiples of this
  bool selectable = true;     ///< false: never picked (e.g. needs multicast)
  std::string location;       ///< "algorithms.json:12", for messages

  /// Why it cannot serve `q` ("" when it can).
  std::string whyNot(const SelectionQuery &q) const;
};

/// What the selection picked.
struct Selection {
  std::string algorithm; ///< file stem, or "copy" for one rank
  int instances = 1;
  /// Params to pass as -D, sorted by name (the root param included).
  std::vector<std::pair<std::string, long long>> params;
  std::string source;   ///< "measured", "estimated" or "builtin"
  std::string location; ///< table entry, "selection.json:40"
  bool builtinCopy() const { return algorithm == "copy"; }
  /// "allreduce_2pa_hb instances=8 K=2": for logs and cache keys.
  std::string describe() const;
};

struct TableEntry {
  Collective collective = Collective::AllReduce;
  int minRanks = 1, maxRanks = limits::kMaxRanks;
  int minNodes = 1, maxNodes = limits::kMaxRanks;
  std::vector<int> archs; ///< empty: any
  uint64_t minBytes = 0, maxBytes = UINT64_MAX; ///< [min, max)
  const AlgorithmInfo *algorithm = nullptr;
  int instances = 1;
  std::vector<std::pair<std::string, long long>> params;
  std::string source;
  std::string location;
};

class SelectionTable {
public:
  /// Parses a catalog and a table; the names appear in error messages
  /// ("selection.json:12: ...").
  static Status parse(const std::string &catalogText,
                      const std::string &catalogName,
                      const std::string &tableText,
                      const std::string &tableName, SelectionTable *out);
  /// Reads and parses the two files.
  static Status load(const std::string &catalogPath,
                     const std::string &tablePath, SelectionTable *out);

  SelectionTable() = default;
  SelectionTable(const SelectionTable &) = delete;
  SelectionTable &operator=(const SelectionTable &) = delete;
  SelectionTable(SelectionTable &&) = default;
  SelectionTable &operator=(SelectionTable &&) = default;

  /// The algorithm for `q`, or Unsupported naming why each candidate fails.
  Status select(const SelectionQuery &q, Selection *out) const;
  const AlgorithmInfo *algorithm(const std::string &name) const;
  const std::vector<AlgorithmInfo> &algorithms() const { return *algorithms_; }
  const std::vector<TableEntry> &entries() const { return entries_; }
  /// SHA-256 of catalog and table text: ranks compare it.
  const std::string &digest() const { return digest_; }

private:
  // Entries point into the catalog: keep its address stable across moves.
  std::unique_ptr<std::vector<AlgorithmInfo>> algorithms_ =
      std::make_unique<std::vector<AlgorithmInfo>>();
  std::vector<TableEntry> entries_;
  std::string digest_;
};

/// 1-based line of byte offset `pos` in `text` (for parse errors).
int lineOf(const std::string &text, size_t pos);

} // namespace mscclc::rt

#endif // MSCCLC_RUNTIME_SELECTION_H
