//===- StdlibPrograms.cpp - Stdlib table, agreement and programs ----------===//

#include "mscclc/runtime/StdlibPrograms.h"
#include "mscclc/runtime/AotStore.h"
#include "mscclc/runtime/Communicator.h"
#include "mscclc/runtime/Files.h"
#include "mscclc/runtime/Hash.h"
#include "mscclc/runtime/Log.h"
#include "mscclc/runtime/Program.h"
#include "mscclc/runtime/Settings.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <dlfcn.h>
#include <map>
#include <mutex>

#ifndef MSCCLC_SOURCE_STDLIB_DIR
#define MSCCLC_SOURCE_STDLIB_DIR ""
#endif

namespace mscclc::rt {

namespace {

struct CachedProgram {
  Status status;
  std::unique_ptr<Program> program;
  std::string programKey; ///< stdlibProgramKey; empty where it failed
  std::string what;       ///< "allreduce_1pa instances=1 in place, 2 ranks"
};

std::mutex &cacheMutex() {
  static std::mutex m;
  return m;
}
/// Never destroyed: executors of live communicators point at these
/// programs until the process ends.
std::map<std::string, CachedProgram> &programCache() {
  static auto *cache = new std::map<std::string, CachedProgram>();
  return *cache;
}

/// A stdlib source, read under Files.h's rules.
Status readStdlibSource(const std::string &path, std::string *text) {
  FileRules rules;
  rules.what = "stdlib source";
  rules.maxBytes = limits::kMaxSourceBytes;
  return readRegularFile(path, rules, text);
}

/// SHA-256 over every .mscl file of `dir` (name and text, by name): what
/// the compiler reads for any stdlib program, imports included. Read once
/// per directory and process.
Status stdlibSourcesDigest(const std::string &dir, std::string *out) {
  static std::mutex m;
  static auto *digests = new std::map<std::string, std::string>();
  std::lock_guard<std::mutex> lock(m);
  auto it = digests->find(dir);
  if (it != digests->end()) {
    *out = it->second;
    return Status::ok();
  }
  std::vector<std::string> names;
  DIR *d = opendir(dir.c_str());
  if (!d)
    return systemError(fmt::format("cannot list {}: {}", dir, strerror(errno)));
  while (dirent *e = readdir(d)) {
    std::string name = e->d_name;
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".mscl") == 0)
      names.push_back(name);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  Sha256 h;
  for (const std::string &name : names) {
    std::string text;
    MSCCLC_TRY(readStdlibSource(dir + "/" + name, &text));
    h.field(name);
    h.field(text);
  }
  *out = digests->emplace(dir, h.hexDigest()).first->second;
  return Status::ok();
}

/// What compileSelection runs the compiler with for `q` and `sel`.
CompilerOptions stdlibCompilerOptions(const StdlibState &state,
                                      const SelectionQuery &q,
                                      const Selection &sel) {
  CompilerOptions opts;
  opts.ranks = q.nranks;
  opts.gpusPerNode = state.nnodes > 1 ? state.gpusPerNode : 0;
  opts.instances = sel.instances;
  opts.defines = sel.params;
  return opts;
}

/// The program from the ahead-of-time store's bundle of `key`, if it has a
/// valid one (*found); an unusable entry is reported and the caller
/// compiles. An error only where MSCCLC_AOT is no boolean.
Status programFromStore(const std::string &key, const std::string &what,
                        std::unique_ptr<Program> *out, bool *found) {
  *found = false;
#if MSCCLC_TARGET_HIP
  // Bundles hold CUDA; HIP builds have no store.
  (void)key, (void)what, (void)out;
  return Status::ok();
#else
  AotStore store;
  MSCCLC_TRY(AotStore::fromEnvironment(&store));
  if (!store.enabled())
    return Status::ok();
  std::string bundle;
  bool hit = false;
  Status s = store.lookup(key, &bundle, &hit, AotEntry::Bundle);
  if (s.isOk() && hit)
    s = Program::fromBundle(bundle, out).context(
        "reading " + store.pathFor(key, AotEntry::Bundle));
  if (!s.isOk()) {
    MSCCLC_LOG(Warn, "{}; compiling {} instead", s.message(), what);
    return Status::ok();
  }
  if (hit)
    MSCCLC_LOG(Info, "{}: program bundle from the ahead-of-time store (key "
                     "{:.12})",
               what, key);
  *found = hit;
  return Status::ok();
#endif
}

Status compileSelection(const StdlibState &state, const SelectionQuery &q,
                        const Selection &sel, std::unique_ptr<Program> *out,
                        std::string *programKey) {
  std::string dir;
  MSCCLC_TRY(stdlibDir(&dir));
  std::string path = dir + "/" + sel.algorithm + ".mscl";
  CompilerOptions opts = stdlibCompilerOptions(state, q, sel);
  std::string what = fmt::format("stdlib algorithm {} ({}, {})", sel.describe(),
                                 path, sel.location);
  MSCCLC_TRY(stdlibProgramKey(dir, opts, sel.algorithm, q.inPlace, programKey)
                 .context("naming " + what));
  bool found = false;
  MSCCLC_TRY(programFromStore(*programKey,
                              what + (q.inPlace ? " in place" : ""), out,
                              &found));
  if (found)
    return Status::ok();
  Status s;
  if (q.inPlace) {
    std::string text, variant;
    MSCCLC_TRY(readStdlibSource(path, &text));
    MSCCLC_TRY(stdlibInPlaceSource(text, dir, path, &variant));
    // Under the algorithm's own file name, so the in-place variant's
    // kernels have the same keys in every process (AOT store, cache).
    s = Program::compileString(variant, opts, out, sel.algorithm + ".mscl");
    what += " in place";
  } else {
    s = Program::compileFile(path, opts, out);
  }
  return s.context("compiling " + what);
}

/// Whether the compiled program computes exactly what `q` asks for.
Status checkProgram(const Program &p, const SelectionQuery &q,
                    const Selection &sel) {
  const Plan &plan = p.plan();
  std::string who = fmt::format("stdlib program {}", sel.describe());
  if (plan.collective != q.collective)
    return unsupported(fmt::format("{} computes {}, not {}", who,
                                   collectiveName(plan.collective),
                                   collectiveName(q.collective)));
  if (plan.inPlace != q.inPlace)
    return unsupported(fmt::format("{} was compiled {}", who,
                                   plan.inPlace ? "in place" : "out of place"));
  if (plan.ranks != q.nranks)
    return unsupported(fmt::format("{} was compiled for {} ranks", who,
                                   plan.ranks));
  if (collectiveRooted(q.collective) && plan.root != q.root)
    return unsupported(fmt::format("{} has root {}, the call root {}", who,
                                   plan.root, q.root));
  if (!plan.supportsDtype(q.dtype))
    return unsupported(fmt::format("{} does not take {}", who, q.dtype));
  if (collectiveReduces(q.collective) && !plan.supportsRedop(q.op))
    return unsupported(fmt::format("{} does not reduce with {}", who, q.op));
  // The program's count must be NCCL's: compare the buffer sizes at a count
  // that every chunk layout would tell apart.
  for (uint64_t c : {q.count, uint64_t(1), uint64_t(1000003)}) {
    uint64_t in = plan.inputElems(c), outE = plan.outputElems(c);
    uint64_t wantIn = inputElements(q.collective, c, q.nranks),
             wantOut = outputElements(q.collective, c, q.nranks);
    if (in != wantIn || outE != wantOut)
      return unsupported(fmt::format(
          "{} takes {} / {} send / receive elements for count {}; NCCL's "
          "convention is {} / {}",
          who, in, outE, c, wantIn, wantOut));
  }
  return Status::ok();
}

} // namespace

Status stdlibProgramKey(const std::string &dir, const CompilerOptions &options,
                        const std::string &algorithm, bool inPlace,
                        std::string *key) {
  std::string sources;
  MSCCLC_TRY(stdlibSourcesDigest(dir, &sources));
  Sha256 h;
  h.field("MSCCLC-STDLIB-PROGRAM-1");
  h.field(sources);
  h.field(algorithm);
  h.field(inPlace ? "inplace" : "outofplace");
  h.field(std::to_string(options.ranks));
  h.field(std::to_string(options.gpusPerNode));
  h.field(std::to_string(options.instances));
  for (const auto &[name, value] : options.defines) {
    h.field(name);
    h.field(std::to_string(value));
  }
  *key = h.hexDigest();
  return Status::ok();
}

std::vector<StdlibProgramEntry> stdlibPrograms() {
  std::lock_guard<std::mutex> lock(cacheMutex());
  std::vector<StdlibProgramEntry> all;
  for (const auto &[name, c] : programCache())
    if (c.status.isOk() && c.program)
      all.push_back({c.programKey, c.what, c.program.get()});
  return all;
}

/// `text` with `inplace` added to its algorithm header and its relative
/// imports made absolute (the variant is compiled from a temporary file).
/// The header is found as the first line starting with `algorithm`; its
/// option list may hold nested parentheses.
Status stdlibInPlaceSource(const std::string &text, const std::string &dir,
                      const std::string &file, std::string *out) {
  size_t pos = 0;
  while (true) {
    pos = text.find("algorithm", pos);
    if (pos == std::string::npos)
      return invalidArgument(fmt::format("{}: no algorithm header", file));
    size_t lineStart = text.rfind('\n', pos);
    lineStart = lineStart == std::string::npos ? 0 : lineStart + 1;
    if (text.find_first_not_of(" \t", lineStart) == pos)
      break;
    pos += 9;
  }
  size_t colon = text.find(':', pos);
  if (colon == std::string::npos)
    return invalidArgument(fmt::format("{}: malformed algorithm header", file));
  size_t i = text.find_first_not_of(" \t\r\n", colon + 1);
  while (i < text.size() && (isalnum(static_cast<unsigned char>(text[i])) ||
                             text[i] == '_'))
    ++i;
  size_t j = text.find_first_not_of(" \t\r\n", i);
  std::string result;
  if (j != std::string::npos && text[j] == '(') {
    int depth = 0;
    size_t k = j;
    for (; k < text.size(); ++k) {
      if (text[k] == '(')
        ++depth;
      else if (text[k] == ')' && --depth == 0)
        break;
    }
    if (k >= text.size())
      return invalidArgument(fmt::format("{}: unbalanced header", file));
    std::string options = text.substr(j + 1, k - j - 1);
    if (options.find("inplace") != std::string::npos)
      result = text;
    else
      result = text.substr(0, k) + ", inplace" + text.substr(k);
  } else {
    result = text.substr(0, i) + "(inplace)" + text.substr(i);
  }
  // Imports are relative to the importing file, which is now elsewhere.
  std::string fixed;
  size_t from = 0;
  while (true) {
    size_t imp = result.find("import", from);
    if (imp == std::string::npos)
      break;
    size_t q = result.find_first_not_of(" \t", imp + 6);
    if (q == std::string::npos || result[q] != '"') {
      fixed += result.substr(from, imp + 6 - from);
      from = imp + 6;
      continue;
    }
    fixed += result.substr(from, q + 1 - from);
    if (result[q + 1] != '/')
      fixed += dir + "/";
    from = q + 1;
  }
  fixed += result.substr(from);
  *out = std::move(fixed);
  return Status::ok();
}

Status stdlibDir(std::string *out) {
  if (std::string env = get(setting::StdlibDir); !env.empty()) {
    if (!isDirectory(env))
      return invalidArgument(
          fmt::format("MSCCLC_STDLIB_DIR='{}' is not a directory", env));
    *out = env;
    return Status::ok();
  }
  Dl_info info;
  if (dladdr(reinterpret_cast<void *>(&stdlibDir), &info) && info.dli_fname) {
    std::string lib = info.dli_fname;
    size_t slash = lib.rfind('/');
    std::string libDir = slash == std::string::npos ? "." : lib.substr(0, slash);
    // <prefix>/lib/libmscclc.so, or <prefix>/lib/<multiarch>/ (Debian's
    // GNUInstallDirs under /usr).
    for (const char *up : {"/../share/mscclc/stdlib", "/../../share/mscclc/stdlib"}) {
      std::string installed = libDir + up;
      if (isRegularFile(installed + "/algorithms.json")) {
        *out = installed;
        return Status::ok();
      }
    }
  }
  std::string source = MSCCLC_SOURCE_STDLIB_DIR;
  if (!source.empty() && isRegularFile(source + "/algorithms.json")) {
    *out = source;
    return Status::ok();
  }
  return invalidArgument(
      "the mscclc stdlib was not found: set MSCCLC_STDLIB_DIR, or install "
      "share/mscclc/stdlib beside lib/libmscclc.so");
}

Status processSelectionTable(const SelectionTable **out) {
  static std::mutex m;
  static Status loaded = Status(Code::Internal, "not loaded");
  static bool tried = false;
  static auto *table = new SelectionTable();
  std::lock_guard<std::mutex> lock(m);
  if (!tried) {
    tried = true;
    std::string dir;
    loaded = stdlibDir(&dir);
    if (loaded.isOk()) {
      std::string tablePath = get(setting::SelectionTable);
      if (tablePath.empty())
        tablePath = dir + "/selection.json";
      loaded = SelectionTable::load(dir + "/algorithms.json", tablePath, table);
      if (loaded.isOk())
        MSCCLC_LOG(Info, "stdlib selection table {} (catalog {}/algorithms.json)",
                   tablePath, dir);
    }
  }
  if (!loaded.isOk())
    return loaded;
  *out = table;
  return Status::ok();
}

Status stdlibSetUp(Communicator &comm, StdlibState *state) {
  const SelectionTable *table = nullptr;
  Status loaded = processSelectionTable(&table);

  // This rank's node (its host, or its virtual node): the ranks on it,
  // which must be a contiguous, aligned block; otherwise -1 (an irregular
  // shape).
  int n = comm.nranks(), me = comm.rank();
  int lo = me, hi = me, local = 0;
  for (int r = 0; r < n; ++r)
    if (comm.sameNode(r)) {
      ++local;
      lo = std::min(lo, r);
      hi = std::max(hi, r);
    }
  int gpn = (hi - lo + 1 == local && lo % local == 0 && n % local == 0) ? local : -1;

  std::vector<StdlibPeerInfo> all(static_cast<size_t>(n));
  StdlibPeerInfo &mine = all[size_t(me)];
  memset(&mine, 0, sizeof(mine));
  if (loaded.isOk())
    memcpy(mine.digest, table->digest().data(),
           std::min(sizeof(mine.digest), table->digest().size()));
  mine.gpusPerNode = gpn;
  mine.arch = comm.arch();
  mine.loaded = loaded.isOk();
  MSCCLC_TRY(comm.bootstrap().allGather(all.data(), sizeof(StdlibPeerInfo))
                 .context("exchanging the stdlib selection table's hash"));
  stdlibAgree(all, me, loaded, table, state);
  if (!state->agreed.isOk())
    MSCCLC_LOG(Warn, "{}", state->agreed.message());
  return Status::ok();
}

void stdlibAgree(const std::vector<StdlibPeerInfo> &all, int me,
                 const Status &loaded, const SelectionTable *table,
                 StdlibState *state) {
  int n = int(all.size());
  state->table = loaded.isOk() ? table : nullptr;
  state->arch = all[0].arch;
  state->gpusPerNode = all[0].gpusPerNode;
  for (const StdlibPeerInfo &i : all)
    if (i.gpusPerNode != all[0].gpusPerNode)
      state->gpusPerNode = -1;
  if (state->gpusPerNode < 1 || n % state->gpusPerNode) {
    // Not one regular shape: every rank is a node of its own, which only
    // algorithms that work between any two GPUs serve.
    state->gpusPerNode = 1;
  }
  state->nnodes = n / state->gpusPerNode;
  // Every failure here is Unsupported: the calls run nothing, and a caller
  // with a fallback (the NCCL library) takes it on every rank alike.
  if (!loaded.isOk()) {
    state->agreed = unsupported(loaded.message());
    return;
  }
  state->agreed = Status::ok();
  const StdlibPeerInfo &mine = all[size_t(me)];
  for (int r = 0; r < n; ++r) {
    const StdlibPeerInfo &i = all[size_t(r)];
    if (!i.loaded) {
      state->agreed = unsupported(fmt::format(
          "rank {} could not load the stdlib selection table (see its log)", r));
      return;
    }
    if (memcmp(i.digest, mine.digest, sizeof(i.digest)) != 0) {
      state->agreed = unsupported(fmt::format(
          "rank {}'s stdlib selection table (hash {}) differs from rank {}'s "
          "(hash {}): every rank must use the same table and catalog "
          "(MSCCLC_SELECTION_TABLE, MSCCLC_STDLIB_DIR), or they would pick "
          "different algorithms and hang",
          r, std::string(i.digest, 16), me, std::string(mine.digest, 16)));
      return;
    }
  }
}

Status stdlibProgram(const StdlibState &state, const SelectionQuery &q,
                     const Selection &sel, Program **out) {
  if (sel.builtinCopy())
    return internalError("the builtin copy has no program");
  std::string key = fmt::format("{}|{}|{}|{}", sel.describe(), q.nranks,
                                state.nnodes > 1 ? state.gpusPerNode : 0,
                                q.inPlace ? "inplace" : "outofplace");
  std::lock_guard<std::mutex> lock(cacheMutex());
  auto it = programCache().find(key);
  if (it == programCache().end()) {
    CachedProgram c;
    c.status = compileSelection(state, q, sel, &c.program, &c.programKey);
    c.what = fmt::format("{}{}, {} ranks{}", sel.describe(),
                         q.inPlace ? " in place" : "", q.nranks,
                         state.nnodes > 1
                             ? fmt::format(" ({} per node)", state.gpusPerNode)
                             : "");
    it = programCache().emplace(key, std::move(c)).first;
  }
  if (!it->second.status.isOk()) {
    Status s = it->second.status;
    // A program that does not compile stays that way; a missing compiler
    // or a full disk may not, so only those are tried again.
    if (s.code() != Code::CompileError && s.code() != Code::Unsupported)
      programCache().erase(it);
    return s;
  }
  MSCCLC_TRY(checkProgram(*it->second.program, q, sel));
  *out = it->second.program.get();
  return Status::ok();
}

/// The most thread blocks any rank's kernel of `p` launches.
static int blocksPerRank(const Program &p) {
  int blocks = 0;
  for (const RankPlan &rp : p.plan().rankPlans)
    blocks = std::max(blocks, int(rp.blocks));
  return blocks;
}

/// Fewer instances of the chosen algorithm until its kernels fit `limit`
/// blocks per rank; Unsupported when one instance does not.
static Status fitBlockLimit(const StdlibState &state, const SelectionQuery &q,
                            int limit, StdlibChoice *c) {
  int blocks = blocksPerRank(*c->program);
  if (limit <= 0 || blocks <= limit)
    return Status::ok();
  Selection sel = c->selection;
  Program *program = c->program;
  while (blocks > limit && sel.instances > 1) {
    // Blocks grow with instances: aim at the largest count that fits.
    int64_t guess = int64_t(sel.instances) * limit / blocks;
    sel.instances = int(std::clamp<int64_t>(guess, 1, sel.instances - 1));
    MSCCLC_TRY(stdlibProgram(state, q, sel, &program));
    blocks = blocksPerRank(*program);
  }
  if (blocks > limit)
    return Status(Code::Unsupported,
                  fmt::format("{} of {} needs {} thread blocks per rank with "
                              "{} instance(s), more than the communicator's "
                              "limit of {} (mscclcCommSetMaxBlocks; the NCCL "
                              "library's maxCTAs)",
                              c->selection.algorithm, collectiveName(q.collective),
                              blocks, sel.instances, limit));
  c->selection = sel;
  c->program = program;
  return Status::ok();
}

Status stdlibResolve(StdlibState &state, const SelectionQuery &q,
                     const StdlibChoice **out) {
  MSCCLC_TRY(state.agreed);
  int limit = state.maxBlocks.load();
  auto key = std::make_tuple(int(q.collective), q.count, q.dtype, q.op, q.root,
                             q.inPlace, limit);
  {
    std::lock_guard<std::mutex> lock(state.memoMutex);
    auto it = state.memo.find(key);
    if (it != state.memo.end()) {
      *out = &it->second;
      return Status::ok();
    }
  }
  StdlibChoice c;
  MSCCLC_TRY(state.table->select(q, &c.selection));
  if (!c.selection.builtinCopy() && q.count > 0) {
    MSCCLC_TRY(stdlibProgram(state, q, c.selection, &c.program));
    MSCCLC_TRY(fitBlockLimit(state, q, limit, &c));
    // premulsum scales the input into the staging on the way in.
    c.staged = c.program->plan().stagedByStdlib() || q.op == "premulsum";
    c.directProgram = c.program;
    if (c.staged && q.inPlace) {
      SelectionQuery outOfPlace = q;
      outOfPlace.inPlace = false;
      MSCCLC_TRY(stdlibProgram(state, outOfPlace, c.selection, &c.program));
    }
  }
  std::lock_guard<std::mutex> lock(state.memoMutex);
  if (state.memo.size() >= StdlibState::kMemoEntries) {
    // Full: keep the answer in a per-thread slot instead.
    thread_local StdlibChoice overflow;
    overflow = std::move(c);
    *out = &overflow;
    return Status::ok();
  }
  *out = &state.memo.emplace(key, std::move(c)).first->second;
  return Status::ok();
}

} // namespace mscclc::rt
