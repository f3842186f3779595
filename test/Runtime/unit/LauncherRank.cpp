//===- LauncherRank.cpp - One rank of the launcher tests ------------------===//
//
//   runtime-launcher-rank --rank R --nranks N --addr host:port
//
// Joins the rendezvous that rank 0 hosts at host:port (uniqueIdFromAddress,
// the secret from MSCCLC_BOOTSTRAP_SECRET), all-gathers every rank's number
// and process id, checks that each of 0..N-1 came once from a process of its
// own, and passes a barrier. That is what a launcher must get right: one
// address and one secret on every rank, distinct ranks. test/Runtime/
// launchers.sh starts it the ways docs/multinode.md describes. No GPU.
// Three flags need no parser library; a bad one is an error with the usage.
//
//===----------------------------------------------------------------------===//

#include "mscclc/runtime/Bootstrap.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

using namespace mscclc::rt;

namespace {

int usage(const char *why) {
  fprintf(stderr, "launcher-rank: %s\nusage: runtime-launcher-rank --rank R "
                  "--nranks N --addr host:port\n", why);
  return 2;
}

bool parseInt(const char *text, long *out) {
  char *end = nullptr;
  *out = strtol(text, &end, 10);
  return *text && !*end;
}

struct Contribution {
  int64_t rank;
  int64_t pid;
};

} // namespace

int main(int argc, char **argv) {
  long rank = -1, nranks = 0;
  std::string addr;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (i + 1 >= argc)
      return usage(("'" + flag + "' needs a value").c_str());
    const char *value = argv[++i];
    if (flag == "--rank" ? !parseInt(value, &rank)
        : flag == "--nranks" ? !parseInt(value, &nranks)
        : flag == "--addr" ? (addr = value).empty()
                           : true)
      return usage(("bad flag or value: " + flag + " " + value).c_str());
  }
  if (nranks < 1 || rank < 0 || rank >= nranks || addr.empty())
    return usage("--rank must be in 0..N-1, --nranks at least 1, --addr set");

  UniqueId id;
  Status s = uniqueIdFromAddress(addr, &id);
  std::unique_ptr<Bootstrap> bootstrap;
  if (s.isOk())
    s = Bootstrap::create(id, int(rank), int(nranks), &bootstrap);
  std::vector<Contribution> all(static_cast<size_t>(nranks));
  all[size_t(rank)] = {rank, int64_t(getpid())};
  if (s.isOk())
    s = bootstrap->allGather(all.data(), sizeof(Contribution));
  if (!s.isOk()) {
    fprintf(stderr, "rank %ld: %s\n", rank, s.message().c_str());
    return 1;
  }
  int bad = 0;
  for (long r = 0; r < nranks; ++r) {
    if (all[size_t(r)].rank != r) {
      fprintf(stderr, "rank %ld: slot %ld holds rank %lld\n", rank, r,
              static_cast<long long>(all[size_t(r)].rank));
      ++bad;
    }
    for (long q = 0; q < r; ++q)
      if (all[size_t(q)].pid == all[size_t(r)].pid) {
        fprintf(stderr, "rank %ld: ranks %ld and %ld are one process\n", rank,
                q, r);
        ++bad;
      }
  }
  s = bootstrap->barrier();
  if (!s.isOk()) {
    fprintf(stderr, "rank %ld: barrier: %s\n", rank, s.message().c_str());
    return 1;
  }
  printf("rank %ld of %ld: %s\n", rank, nranks, bad ? "FAILED" : "ok");
  return bad ? 1 : 0;
}
