//===- Trace.cpp - Chrome trace-event JSON of the timed schedule ---------===//
//
// One process per rank, one thread per thread block (tid = block id, so a
// group's blocks get consecutive tracks), one complete event ("X") per
// operation in cost-model microseconds, and flow arrows ("s" to "f") from
// every signal to the wait it released. Perfetto and chrome://tracing open
// it.
//
//===----------------------------------------------------------------------===//

#include "Trace.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <set>

using namespace mscclc::sim;

std::string mscclc::sim::writeTrace(llvm::StringRef path, const Model &model,
                                    llvm::ArrayRef<TraceSlice> slices,
                                    llvm::StringRef title, double estimate,
                                    bool truncated) {
  std::error_code ec;
  llvm::raw_fd_ostream file(path, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return "cannot write trace '" + path.str() + "': " + ec.message();
  llvm::json::OStream json(file, 1);
  json.object([&] {
    json.attribute("displayTimeUnit", "ns");
    json.attributeObject("otherData", [&] {
      json.attribute("algorithm", title);
      json.attribute("estimated_us", estimate);
      if (truncated)
        json.attribute("truncated", "only the first operations are shown");
    });
    json.attributeArray("traceEvents", [&] {
      std::set<std::pair<int, int64_t>> threads;
      for (int r = 0; r < model.ranks; ++r)
        json.object([&] {
          json.attribute("name", "process_name");
          json.attribute("ph", "M");
          json.attribute("pid", r);
          json.attributeObject("args", [&] {
            json.attribute("name", "rank " + std::to_string(r));
          });
        });
      for (const BlockInfo &block : model.blocks)
        for (int64_t m = 0; m < block.group; ++m)
          threads.insert({block.rank, block.id + m});
      for (auto [rank, tid] : threads)
        json.object([&] {
          json.attribute("name", "thread_name");
          json.attribute("ph", "M");
          json.attribute("pid", rank);
          json.attribute("tid", tid);
          json.attributeObject("args", [&] {
            json.attribute("name", "tb " + std::to_string(tid));
          });
        });
      for (const TraceSlice &s : slices) {
        int64_t tid = s.tb + s.member;
        json.object([&] {
          json.attribute("name", s.name);
          json.attribute("cat", "op");
          json.attribute("ph", "X");
          json.attribute("ts", s.start);
          json.attribute("dur", std::max(0.0, s.end - s.start));
          json.attribute("pid", s.rank);
          json.attribute("tid", tid);
          json.attributeObject("args", [&] {
            json.attribute("bytes", s.bytes);
            if (!s.loc.empty())
              json.attribute("loc", s.loc);
            if (s.iteration >= 0)
              json.attribute("iteration", s.iteration);
          });
        });
        double mid = (s.start + s.end) / 2;
        for (int flow : s.flowOut)
          json.object([&] {
            json.attribute("name", "signal");
            json.attribute("cat", "sync");
            json.attribute("ph", "s");
            json.attribute("id", flow);
            json.attribute("ts", mid);
            json.attribute("pid", s.rank);
            json.attribute("tid", tid);
          });
        for (int flow : s.flowIn)
          json.object([&] {
            json.attribute("name", "signal");
            json.attribute("cat", "sync");
            json.attribute("ph", "f");
            json.attribute("bp", "e");
            json.attribute("id", flow);
            json.attribute("ts", mid);
            json.attribute("pid", s.rank);
            json.attribute("tid", tid);
          });
      }
    });
  });
  file << "\n";
  return "";
}
