//===- RankThreads.h - Bootstrap ranks as threads of one test process -----===//

#ifndef MSCCLC_TEST_RANKTHREADS_H
#define MSCCLC_TEST_RANKTHREADS_H

#include "mscclc/runtime/Bootstrap.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <thread>
#include <vector>

namespace mscclc::rt::test {

/// Builds a bootstrap of `n` rank threads from `id` and runs `work` on each
/// rank's; the status of each rank (creation's when it failed).
inline std::vector<Status>
onRankThreads(const UniqueId &id, int n,
              const std::function<Status(Bootstrap &)> &work) {
  std::vector<Status> statuses(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      std::unique_ptr<Bootstrap> b;
      Status s = Bootstrap::create(id, r, n, &b);
      if (s.isOk())
        s = work(*b);
      statuses[size_t(r)] = s;
    });
  for (auto &t : threads)
    t.join();
  return statuses;
}

inline void expectAllOk(const std::vector<Status> &statuses) {
  for (size_t r = 0; r < statuses.size(); ++r)
    EXPECT_TRUE(statuses[r].isOk()) << "rank " << r << ": "
                                    << statuses[r].message();
}

} // namespace mscclc::rt::test

#endif // MSCCLC_TEST_RANKTHREADS_H
