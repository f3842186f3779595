//===- AotBuild.cpp - Compiling the selection table's picks ahead of time -===//

#include "AotBuild.h"
#include "mscclc/runtime/Log.h"
#include "mscclc/runtime/Program.h"
#include "mscclc/runtime/StdlibPrograms.h"

#include <atomic>
#include <dirent.h>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <sys/stat.h>
#include <unistd.h>

namespace mscclc::rt {

std::vector<uint64_t> aotSweepCounts(const SelectionTable &table,
                                     const SelectionQuery &q) {
  SelectionQuery one = q;
  one.count = 1;
  uint64_t bytesPerCount = std::max<uint64_t>(selectionBytes(one), 1);
  std::set<uint64_t> bytes;
  for (int shift = 0; shift <= 34; ++shift) // 1 B to 16 GiB
    bytes.insert(uint64_t(1) << shift);
  for (const TableEntry &e : table.entries()) {
    if (e.collective != q.collective)
      continue;
    bytes.insert(e.minBytes);
    if (e.maxBytes != UINT64_MAX)
      bytes.insert(e.maxBytes - 1);
  }
  std::set<uint64_t> counts;
  for (uint64_t b : bytes) {
    uint64_t c = b / bytesPerCount;
    if (c > (uint64_t(1) << 40))
      continue;
    for (uint64_t n : {c, c + 1})
      if (n > 0)
        counts.insert(n);
    if (c > 1)
      counts.insert(c - 1);
  }
  return {counts.begin(), counts.end()};
}

Status aotKernels(const SelectionTable &table, const AotConfig &config,
                  std::vector<AotKernel> *out, size_t *programs) {
  std::map<std::string, AotKernel> byKey;
  std::set<const Program *> seen;
  for (int arch : config.archs)
    for (int nranks : config.ranks) {
      // What stdlibSetUp agrees on for nranks ranks on one host.
      StdlibState state;
      state.agreed = Status::ok();
      state.table = &table;
      state.gpusPerNode = nranks;
      state.nnodes = 1;
      state.arch = arch;
      for (int c = 0; c < kNumCollectives; ++c)
        for (const std::string &dtype : config.dtypes)
          for (const std::string &op : config.ops) {
            Collective coll = Collective(c);
            // Other collectives are compiled with sum whatever the call's
            // operator (stdlibQuery): one pass for them.
            if (!collectiveReduces(coll) && op != config.ops.front())
              continue;
            for (bool inPlace : {false, true}) {
              SelectionQuery q;
              q.collective = coll;
              q.nranks = nranks;
              q.nnodes = 1;
              q.arch = arch;
              q.dtype = dtype;
              q.op = collectiveReduces(coll) ? op : "sum";
              q.inPlace = inPlace;
              for (uint64_t count : aotSweepCounts(table, q)) {
                q.count = count;
                const StdlibChoice *choice = nullptr;
                Status s = stdlibResolve(state, q, &choice);
                if (s.code() == Code::Unsupported)
                  continue; // nothing serves this call: nothing to ship
                MSCCLC_TRY(s.context(fmt::format(
                    "{} of {} x {} at {} ranks for sm_{}",
                    collectiveName(coll), count, dtype, nranks, arch)));
                if (!choice->program)
                  continue; // the builtin copy
                Program &p = *choice->program;
                seen.insert(&p);
                // What the executor compiles for q (avg, premulsum: sum).
                std::string redop = q.op == "avg" || q.op == "premulsum"
                                        ? "sum"
                                        : q.op;
                for (int rank = 0; rank < nranks; ++rank) {
                  AotKernel k;
                  k.request = p.compileRequest(arch, dtype, redop, rank);
                  k.key = kernelKey(k.request);
                  if (byKey.count(k.key))
                    continue;
                  k.what = fmt::format(
                      "{}{}, {} ranks, rank {}, {} {}, sm_{}",
                      choice->selection.describe(),
                      p.plan().inPlace ? " in place" : "", nranks, rank, dtype,
                      redop, arch);
                  byKey.emplace(k.key, std::move(k));
                }
              }
            }
          }
    }
  out->clear();
  for (auto &[key, k] : byKey)
    out->push_back(std::move(k));
  *programs = seen.size();
  return Status::ok();
}

Status buildAotStore(const std::vector<AotKernel> &kernels,
                     const AotStore &store, int jobs, AotBuildStats *stats) {
  *stats = AotBuildStats();
  mkdir(store.dir().c_str(), 0755); // the parents: the caller
  std::vector<const AotKernel *> todo;
  for (const AotKernel &k : kernels) {
    std::string binary;
    bool hit = false;
    if (store.lookup(k.key, &binary, &hit).isOk() && hit)
      ++stats->kept;
    else
      todo.push_back(&k);
  }
  std::atomic<size_t> next{0};
  std::mutex failMutex;
  Status failure;
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < todo.size();) {
      std::string cubin;
      Status s = compileToCubin(todo[i]->request, &cubin);
      if (s.isOk())
        s = store.write(todo[i]->key, cubin);
      if (!s.isOk()) {
        std::lock_guard<std::mutex> lock(failMutex);
        if (failure.isOk())
          failure = s.context(todo[i]->what);
        return;
      }
      MSCCLC_LOG(Info, "aot: compiled {} ({} of {})", todo[i]->what, i + 1,
                 todo.size());
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < std::max(jobs, 1); ++t)
    threads.emplace_back(worker);
  for (std::thread &t : threads)
    t.join();
  MSCCLC_TRY(failure);
  stats->compiled = todo.size();

  // Entries of kernels the table no longer picks would be installed too.
  std::set<std::string> wanted;
  for (const AotKernel &k : kernels)
    wanted.insert(k.key + ".cubin");
  if (DIR *d = opendir(store.dir().c_str())) {
    while (dirent *e = readdir(d)) {
      std::string name = e->d_name;
      if (name.size() > 6 && name.compare(name.size() - 6, 6, ".cubin") == 0 &&
          !wanted.count(name) &&
          unlink((store.dir() + "/" + name).c_str()) == 0)
        ++stats->removed;
    }
    closedir(d);
  }
  std::ofstream manifest(store.dir() + "/manifest.tsv", std::ios::trunc);
  manifest << "# mscclc ahead-of-time kernels: key, then what it is\n";
  for (const AotKernel &k : kernels)
    manifest << k.key << "\t" << k.what << "\n";
  if (!manifest)
    return systemError(fmt::format("cannot write {}/manifest.tsv", store.dir()));
  return Status::ok();
}

} // namespace mscclc::rt
