//===- AotBuild.cpp - Compiling the selection table's picks ahead of time -===//

#include "AotBuild.h"
#include "mscclc/runtime/Log.h"
#include "mscclc/runtime/Program.h"
#include "mscclc/runtime/StdlibPrograms.h"

#include <atomic>
#include <cstdlib>
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
                  std::vector<AotKernel> *out,
                  std::vector<AotBundle> *bundles) {
  // The shapes a communicator can agree on (stdlibAgree): one node of
  // each rank count, and the configured multi-node shapes.
  struct Shape {
    int nranks, gpusPerNode, nnodes;
  };
  std::vector<Shape> shapes;
  for (int nranks : config.ranks)
    shapes.push_back({nranks, nranks, 1});
  for (const auto &[nodes, perNode] : config.nodeShapes)
    shapes.push_back({nodes * perNode, perNode, nodes});
  std::map<std::string, AotKernel> byKey;
  for (int arch : config.archs)
    for (const Shape &shape : shapes) {
      int nranks = shape.nranks;
      StdlibState state;
      state.agreed = Status::ok();
      state.table = &table;
      state.gpusPerNode = shape.gpusPerNode;
      state.nnodes = shape.nnodes;
      state.arch = arch;
      std::string where =
          shape.nnodes > 1
              ? fmt::format("{} ranks ({} nodes of {})", nranks, shape.nnodes,
                            shape.gpusPerNode)
              : fmt::format("{} ranks", nranks);
      for (int c = 0; c < kNumStandardCollectives; ++c)
        for (const std::string &dtype : config.dtypes)
          for (const std::string &op : config.ops) {
            Collective coll = Collective(c);
            // Other collectives are compiled with sum whatever the call's
            // operator (stdlibQuery): one pass for them.
            if (!collectiveReduces(coll) && op != config.ops.front())
              continue;
            int roots = collectiveRooted(coll) && config.everyRoot ? nranks : 1;
            for (int root = 0; root < roots; ++root)
            for (bool inPlace : {false, true}) {
              SelectionQuery q;
              q.collective = coll;
              q.nranks = nranks;
              q.nnodes = shape.nnodes;
              q.arch = arch;
              q.dtype = dtype;
              q.op = collectiveReduces(coll) ? op : "sum";
              q.root = root;
              q.inPlace = inPlace;
              for (uint64_t count : aotSweepCounts(table, q)) {
                q.count = count;
                const StdlibChoice *choice = nullptr;
                Status s = stdlibResolve(state, q, &choice);
                if (s.code() == Code::Unsupported)
                  continue; // nothing serves this call: nothing to ship
                MSCCLC_TRY(s.context(fmt::format(
                    "{} of {} x {} at {} for sm_{}", collectiveName(coll),
                    count, dtype, where, arch)));
                if (!choice->program)
                  continue; // the builtin copy
                Program &p = *choice->program;
                // What the executor compiles for q (avg, premulsum: sum).
                std::string redop = Program::kernelRedop(q.op);
                for (int rank = 0; rank < nranks; ++rank) {
                  AotKernel k;
                  k.request = p.compileRequest(arch, dtype, redop, rank);
                  k.key = kernelKey(k.request);
                  if (byKey.count(k.key))
                    continue;
                  k.what = fmt::format(
                      "{}{}, {}, rank {}, {} {}, sm_{}",
                      choice->selection.describe(),
                      p.plan().inPlace ? " in place" : "", where, rank, dtype,
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
  // Every program the resolutions needed, launched or not: a first call
  // needs the in-place variant's plan to learn that it runs staged.
  std::map<std::string, AotBundle> bundleByKey;
  for (const StdlibProgramEntry &e : stdlibPrograms())
    bundleByKey[e.key] = AotBundle{e.key, e.program->bundleJson(), e.what};
  bundles->clear();
  for (auto &[key, b] : bundleByKey)
    bundles->push_back(std::move(b));
  return Status::ok();
}

Status buildAotStore(const std::vector<AotKernel> &kernels,
                     const std::vector<AotBundle> &bundles,
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
  // Small, and cheaper to write than to compare.
  for (const AotBundle &b : bundles)
    MSCCLC_TRY(store.write(b.key, b.bundle, AotEntry::Bundle).context(b.what));
  stats->bundles = bundles.size();

  // Entries the table no longer picks would be installed too.
  std::set<std::string> wanted;
  for (const AotKernel &k : kernels)
    wanted.insert(k.key + ".cubin");
  for (const AotBundle &b : bundles)
    wanted.insert(b.key + ".bundle");
  auto endsWith = [](const std::string &name, const std::string &suffix) {
    return name.size() > suffix.size() &&
           name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (DIR *d = opendir(store.dir().c_str())) {
    while (dirent *e = readdir(d)) {
      std::string name = e->d_name, path = store.dir() + "/" + name;
      if (!endsWith(name, ".cubin") && !endsWith(name, ".bundle"))
        continue;
      struct stat st;
      if (!wanted.count(name)) {
        if (unlink(path.c_str()) == 0)
          ++stats->removed;
      } else if (stat(path.c_str(), &st) == 0) {
        stats->bytes += size_t(st.st_size);
      }
    }
    closedir(d);
  }
  std::ofstream manifest(store.dir() + "/manifest.tsv", std::ios::trunc);
  manifest << "# mscclc ahead-of-time store: key, then what it is "
              "(kernels, then program bundles)\n";
  for (const AotKernel &k : kernels)
    manifest << k.key << "\t" << k.what << "\n";
  for (const AotBundle &b : bundles)
    manifest << b.key << "\tprogram " << b.what << "\n";
  if (!manifest)
    return systemError(fmt::format("cannot write {}/manifest.tsv", store.dir()));
  return Status::ok();
}

} // namespace mscclc::rt
