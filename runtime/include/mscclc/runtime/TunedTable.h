//===- TunedTable.h - A selection table from measured timings -*- C++ -*-===//
//
// The tuner (`mscclc-bench --tune`) times candidate algorithms at a series
// of sizes on the machine at hand; this turns those timings into a table in
// the selection format (stdlib/README.md) that MSCCLC_SELECTION_TABLE can
// name: for each collective, the fastest candidate at each measured size
// serves from that size up to the next measured one (consecutive sizes with
// the same winner become one range), for exactly the measured rank count,
// node count and architecture, marked "measured". The base table's entries
// follow, so every other call keeps its choice.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_TUNEDTABLE_H
#define MSCCLC_RUNTIME_TUNEDTABLE_H

#include "mscclc/runtime/Selection.h"
#include "mscclc/runtime/Status.h"

#include <string>
#include <vector>

namespace mscclc::rt {

/// One candidate timed at one size.
struct TuneSample {
  Collective collective = Collective::AllReduce;
  std::string algorithm; ///< stdlib file stem
  int instances = 1;
  uint64_t bytes = 0;    ///< selectionBytes of the call
  double microseconds = 0;
};

/// Where the samples were taken.
struct TuneShape {
  int ranks = 0;
  int nodes = 1;
  int arch = 0;     ///< 90 for sm_90
  std::string note; ///< hardware and date, kept in the table's "note"
};

/// The tuned table's JSON text: tuned entries, then `baseTable`'s (the
/// selection format's text). InvalidArgument for samples that cannot make
/// a table (none, a non-positive time, an unknown shape).
Status tunedSelectionTable(const std::string &baseTable, const TuneShape &shape,
                           const std::vector<TuneSample> &samples,
                           std::string *out);

} // namespace mscclc::rt

#endif // MSCCLC_RUNTIME_TUNEDTABLE_H
