//===- Main.cpp - mscclc-hostrun: generated kernels on the CPU, checked --===//
//
// Runs the kernels of `mscclc --emit=cuda` (linked in: KernelUnit.cpp) for
// every rank of a plan in one process, on host memory, with real data, and
// compares every output element with the collective's definition or with
// an expression file (docs/testing.md, "Host runs"). Exit status: 0 every
// element right; 1 the program failed (wrong elements, a device error
// record, a proxy error, a hang); 2 unsupported here; 3 usage or set-up
// error.
//
//===----------------------------------------------------------------------===//

#include "DType.h"
#include "KernelUnit.h"
#include "Machine.h"
#include "Oracle.h"
#include "Plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <stdexcept>

using namespace hostrun;

namespace {

enum Exit { Ok = 0, Wrong = 1, Unsupported = 2, Usage = 3 };

struct Options {
  std::string plan, exprs;
  std::vector<uint64_t> counts = {1, 7, 1003};
  unsigned launches = 1;
  uint64_t seed = 1;
  unsigned threads = 0; ///< 0: what the unit says it needs
  uint64_t timeoutMs = 10000;
  uint64_t offset = 0;
  bool lockstep = false;
  unsigned jitter = 0;
  unsigned fifo = 1024;
  unsigned maxReport = 10;
};

const char *kUsage =
    "usage: mscclc-hostrun --plan PLAN.json [--counts C1,C2,...] "
    "[--launches L]\n"
    "         [--seed S] [--exprs FILE] [--threads N] [--timeout-ms MS]\n"
    "         [--offset ELEMS] [--lockstep] [--jitter US]\n"
    "         [--fifo N] [--max-report N]\n"
    "Each count gets L launches, in order, on the same buffers.\n";

[[noreturn]] void usage(const std::string &why) {
  std::fprintf(stderr, "mscclc-hostrun: %s\n%s", why.c_str(), kUsage);
  std::exit(Usage);
}

uint64_t number(const std::string &flag, const std::string &s) {
  try {
    size_t used = 0;
    const unsigned long long v = std::stoull(s, &used, 0);
    if (used == s.size() && s[0] != '-')
      return v;
  } catch (const std::exception &) {
  }
  usage(fmt::format("{} takes a number, not '{}'", flag, s));
}

Options parse(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        usage(flag + " needs a value");
      return argv[++i];
    };
    if (flag == "--plan")
      o.plan = value();
    else if (flag == "--exprs")
      o.exprs = value();
    else if (flag == "--counts") {
      o.counts.clear();
      std::string list = value();
      size_t start = 0;
      for (;;) {
        const size_t comma = list.find(',', start);
        o.counts.push_back(number(flag, list.substr(start, comma - start)));
        if (comma == std::string::npos)
          break;
        start = comma + 1;
      }
    } else if (flag == "--launches")
      o.launches = unsigned(number(flag, value()));
    else if (flag == "--seed")
      o.seed = number(flag, value());
    else if (flag == "--threads")
      o.threads = unsigned(number(flag, value()));
    else if (flag == "--timeout-ms")
      o.timeoutMs = number(flag, value());
    else if (flag == "--offset")
      o.offset = number(flag, value());
    else if (flag == "--lockstep")
      o.lockstep = true;
    else if (flag == "--jitter")
      o.jitter = unsigned(number(flag, value()));
    else if (flag == "--fifo")
      o.fifo = unsigned(number(flag, value()));
    else if (flag == "--max-report")
      o.maxReport = unsigned(number(flag, value()));
    else if (flag == "--help" || flag == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(Ok);
    } else
      usage("unknown option " + flag);
  }
  if (o.plan.empty())
    usage("--plan is required");
  if (o.launches == 0 || o.counts.empty())
    usage("nothing to launch");
  if (o.threads > 1024 || o.fifo == 0)
    usage("--threads takes 1 to 1024, --fifo at least 1");
  // Spins yield the CPU when they look at the clock, which they do only
  // with a time-out: without one, spinning threads starve the others.
  if (o.timeoutMs == 0)
    usage("--timeout-ms must be at least 1");
  return o;
}

bool contains(const std::vector<std::string> &list, const std::string &s) {
  for (const std::string &x : list)
    if (x == s)
      return true;
  return false;
}

/// Prints the first wrong elements, after the verdict's line.
struct Report {
  std::string header;
  unsigned budget = 0;
  uint64_t wrong = 0, exact = 0, approx = 0;
  std::map<int, uint64_t> wrongOf; ///< per rank

  /// Counts a wrong element of `rank`; `text` says which, if still shown.
  template <class Text> void line(int rank, Text text) {
    ++wrongOf[rank];
    if (wrong++ == 0 && !header.empty())
      fmt::print("{}\n", header);
    if (budget == 0)
      return;
    --budget;
    fmt::print("{}\n", text());
  }
};

/// Compares one launch's snapshots with its case.
void compare(const Plan &plan, const DType &type, const Oracle &oracle,
             const Case &c, unsigned launch, const std::vector<Snapshot> &snaps,
             Report &rep) {
  const unsigned size = type.size;
  auto report = [&](int rank, auto text) {
    rep.line(rank, [&] {
      return fmt::format("{} (launch {}, count {})", text(), launch, c.count);
    });
  };
  for (int r = 0; r < plan.ranks; ++r) {
    const Snapshot &s = snaps[size_t(r)];
    if (!s.ran)
      continue;
    const RankCase &rc = c.ranks[size_t(r)];
    const Geometry &g = rc.geo;
    for (uint64_t e = 0; e < g.outElems; ++e) {
      const unsigned char *got = &s.output[(g.outBase + e) * size];
      const unsigned char *want = &rc.expect[e * size];
      bool ok = true;
      switch (rc.check[e]) {
      case Check::Free:
        continue;
      case Check::Exact:
      case Check::Keep:
        ok = std::memcmp(got, want, size) == 0;
        ++rep.exact;
        break;
      case Check::Approx:
        // False for NaN, too.
        ok =
            std::fabs(mscclc_hostrun_to_double(got) - rc.value[e]) <= rc.tol[e];
        ++rep.approx;
        break;
      }
      if (ok)
        continue;
      report(r, [&] {
        const uint64_t j = chunkOf(e, c.count, plan.chunks, plan.outputChunks);
        const std::string why = oracle.explain(c, r, e, got);
        const std::string expected =
            rc.check[e] == Check::Approx
                ? fmt::format("{:.9g} +- {:.3g}", rc.value[e], rc.tol[e])
                : formatElement(type, want) +
                      (rc.check[e] == Check::Keep ? " (unchanged)" : "");
        return fmt::format(
            "rank {} output element {} (chunk {}, position {} in the chunk): "
            "expected {}, got {}{}",
            r, e, j, e - mscclc_chunk_begin(j, c.count, plan.chunks), expected,
            formatElement(type, got), why.empty() ? "" : " = " + why);
      });
    }
    // Out of place, the input is read-only (language.md).
    for (uint64_t i = 0; i < s.input.size() / size; ++i)
      if (std::memcmp(&s.input[i * size], &rc.input[i * size], size) != 0)
        report(r, [&] {
          return fmt::format(
              "rank {} input element {} (chunk {}) was written: was {}, now {}",
              r, i, chunkOf(i, c.count, plan.chunks, plan.inputChunks),
              formatElement(type, &rc.input[i * size]),
              formatElement(type, &s.input[i * size]));
        });
  }
}

/// Points at the first launch that reuses scratch at another count than
/// the launch before: the runtime keeps scratch that is large enough, but
/// its layout (packet buffers' parity halves included) follows the count,
/// so a rank a launch ahead can overwrite what a peer still has to read.

int run(const Options &o) {
  MscclcHostUnit unit;
  mscclc_hostrun_describe(&unit);
  const DType *type = findDType(unit.dtype);
  if (!type || type->size != unit.elemSize) {
    fmt::print(stderr, "mscclc-hostrun: unknown element type {}\n", unit.dtype);
    return Usage;
  }
  Plan plan;
  try {
    plan = readPlan(o.plan);
  } catch (const std::exception &e) {
    fmt::print(stderr, "mscclc-hostrun: {}\n", e.what());
    return Usage;
  }
  const std::string op = unit.redop;
  auto unsupported = [&](const std::string &why) {
    fmt::print("hostrun: UNSUPPORTED: {}: {}\n", plan.name, why);
    return Unsupported;
  };
  if (plan.usesSwitchChannels)
    return unsupported("switch channels (multimem) are not emulated");
  if (op != "sum" && op != "prod" && op != "min" && op != "max")
    return unsupported("operator " + op + " (sum, prod, min and max are)");
  if (!contains(plan.dtypes, unit.dtype) || !contains(plan.redops, op))
    return unsupported(
        fmt::format("the plan does not accept {} {}", unit.dtype, op));
  if (o.exprs.empty() && plan.collective == "custom")
    return unsupported("a custom collective is checked with --exprs only");
  const unsigned threads = o.threads ? o.threads : unit.threads;

  std::vector<Case> cases;
  std::vector<uint64_t> counts;
  try {
    Oracle oracle(plan, *type, op, o.seed, o.exprs);
    for (uint64_t count : o.counts)
      for (unsigned l = 0; l < o.launches; ++l) {
        cases.push_back(oracle.make(unsigned(cases.size()), count));
        counts.push_back(count);
      }

    MachineOptions mo;
    mo.threads = threads;
    mo.timeoutNs = o.timeoutMs * 1000000ull;
    mo.fifoCapacity = o.fifo;
    mo.offsetElems = o.offset;
    mo.lockstep = o.lockstep;
    mo.jitterUs = o.jitter;
    mo.seed = o.seed;
    mscclc_hostrun_set_jitter(o.jitter, o.seed);
    Machine machine(plan, unit, mo, counts);
    std::vector<std::vector<Snapshot>> snaps;
    const bool ran = machine.run(cases, snaps);

    if (unsigned missing = mscclc_hostrun_missing_threads()) {
      fmt::print("hostrun: ERROR: the kernels give a role to thread {} of a "
                 "block, but blocks ran {} threads: pass --threads {}\n",
                 missing - 1, threads, missing);
      return Usage;
    }
    std::string list;
    for (uint64_t c : o.counts)
      list += (list.empty() ? "" : ",") + std::to_string(c);
    const std::string what =
        fmt::format("{} ({}), {} ranks, {} {}, counts {} x {} launch{}{}",
                    plan.name, plan.collective, plan.ranks, unit.dtype, op,
                    list, o.launches, o.launches == 1 ? "" : "es",
                    unit.llPacketBytes == 8 ? ", LL8 packets" : "");
    Report rep;
    rep.header = "hostrun: FAIL: " + what;
    rep.budget = o.maxReport;
    if (!ran) {
      fmt::print("{}\n", rep.header);
      rep.header.clear();
      for (const std::string &f : machine.failures())
        fmt::print("{}\n", f);
    }
    for (unsigned k = 0; k < cases.size(); ++k)
      compare(plan, *type, oracle, cases[k], k, snaps[k], rep);
    if (!ran || rep.wrong) {
      if (rep.wrong) {
        std::string ranks;
        for (const auto &[r, n] : rep.wrongOf)
          ranks +=
              fmt::format("{}rank {}: {}", ranks.empty() ? "" : ", ", r, n);
        fmt::print("hostrun: {} wrong element{}{} ({})\n", rep.wrong,
                   rep.wrong == 1 ? "" : "s",
                   rep.wrong > o.maxReport
                       ? fmt::format(", {} shown", o.maxReport)
                       : "",
                   ranks);
      }
      return Wrong;
    }
    fmt::print("hostrun: ok: {}: {} elements exact{}{}\n", what, rep.exact,
               rep.approx ? fmt::format(", {} within the rounding bound "
                                        "(n-1) u S (u = {:g}, S = the sum "
                                        "of |terms| or |product|)",
                                        rep.approx, type->roundoff)
                          : "",
               oracle.usesExprs() ? " (against the expression file)" : "");
    return Ok;
  } catch (const std::exception &e) {
    fmt::print(stderr, "mscclc-hostrun: {}\n", e.what());
    return Usage;
  }
}

} // namespace

int main(int argc, char **argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  return run(parse(argc, argv));
}
