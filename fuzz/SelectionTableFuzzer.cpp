//===- SelectionTableFuzzer.cpp - The stdlib's tables on any bytes -------===//
//
// The runtime reads two JSON files to choose a stdlib algorithm: the
// catalog (algorithms.json) and the selection table (selection.json, or
// MSCCLC_SELECTION_TABLE, which the tuner writes). The first byte of an
// input says which one the rest replaces (even: the table, odd: the
// catalog); the other is the shipped file. The reader must turn anything
// into a table or an error. A table that parses is asked what the runtime
// asks of it, and the tuner merges timings into it.
//
//===----------------------------------------------------------------------===//

#include "mscclc/runtime/Files.h"
#include "mscclc/runtime/Selection.h"
#include "mscclc/runtime/TunedTable.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

using namespace mscclc::rt;

/// A shipped file of the stdlib (MSCCLC_FUZZ_STDLIB_DIR), read once.
const std::string &shipped(const char *name) {
  static std::string texts[2];
  std::string &text = texts[std::string(name) == "selection.json"];
  if (text.empty() &&
      !readFile(std::string(MSCCLC_FUZZ_STDLIB_DIR) + "/" + name, &text)
           .isOk()) {
    fprintf(stderr, "cannot read the stdlib's %s\n", name);
    abort();
  }
  return text;
}

/// Queries over every collective at a few shapes and sizes.
void askEverything(const SelectionTable &table) {
  for (int c = 0; c < mscclc::kNumStandardCollectives; ++c)
    for (int ranks : {1, 2, 8, 16})
      for (uint64_t count : {uint64_t(0), uint64_t(1), uint64_t(1) << 20}) {
        SelectionQuery q;
        q.collective = Collective(c);
        q.nranks = ranks;
        q.nnodes = ranks >= 16 ? 2 : 1;
        q.count = count;
        q.root = ranks - 1;
        Selection s;
        if (table.select(q, &s).isOk())
          (void)s.describe();
      }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  bool catalogFuzzed = data[0] & 1;
  std::string text(reinterpret_cast<const char *>(data + 1), size - 1);
  const std::string &catalog =
      catalogFuzzed ? text : shipped("algorithms.json");
  const std::string &tableText = catalogFuzzed ? shipped("selection.json") : text;
  SelectionTable table;
  if (SelectionTable::parse(catalog, "algorithms.json", tableText,
                            "selection.json", &table)
          .isOk())
    askEverything(table);
  if (catalogFuzzed)
    return 0;
  // The tuner takes any table text as its base.
  TuneShape shape;
  shape.ranks = 4;
  shape.arch = 90;
  TuneSample sample;
  sample.algorithm = "allreduce_1pa";
  sample.bytes = 1024;
  sample.microseconds = 5;
  std::string tuned;
  (void)tunedSelectionTable(text, shape, {sample}, &tuned);
  return 0;
}
