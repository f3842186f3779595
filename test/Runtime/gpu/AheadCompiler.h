//===- AheadCompiler.h - Compile work on every core, ahead of a run ---*- C++ -*-===//
//
// The GPU sweeps are NVRTC-bound when each case compiles only its own
// ranks' kernels (one thread per rank: two threads at 2 ranks on a 16-core
// machine). An AheadCompiler runs the compile work of a sequence of items
// (the examples, in run order) on a pool of threads while the run consumes
// them in order:
// - first every item's compile(i) (the program), in order;
// - then, item by item, its kernels kernel(i, k).
// take(i) waits for compile(i). release(i) drops item i's kernels that have
// not started and waits for those running, after which the caller may free
// what they use. A kernel the run needs before the pool reaches it is
// compiled by the run itself (the runtime compiles each kernel once and
// lets a second caller wait for it).
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_TEST_AHEAD_COMPILER_H
#define MSCCLC_TEST_AHEAD_COMPILER_H

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace gputest {

class AheadCompiler {
public:
  /// `kernels` kernels per item: kernel(i, k) for k < kernels, asked after
  /// compile(i) (kernel may find that the item has nothing to compile).
  AheadCompiler(size_t items, size_t kernels, int threads,
                std::function<void(size_t)> compile,
                std::function<void(size_t, size_t)> kernel)
      : compile_(std::move(compile)), kernel_(std::move(kernel)),
        state_(items) {
    for (size_t i = 0; i < items; ++i)
      tasks_.push_back({i, kCompile});
    for (size_t i = 0; i < items; ++i)
      for (size_t k = 0; k < kernels; ++k)
        tasks_.push_back({i, k});
    for (int t = 0; t < threads; ++t)
      pool_.emplace_back([this] { work(); });
  }

  /// Stops: tasks not started are dropped, running ones finish.
  ~AheadCompiler() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    for (std::thread &t : pool_)
      t.join();
  }

  /// Waits until compile(i) has run.
  void take(size_t i) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return state_[i].compiled; });
  }

  /// Item i's kernels not started are dropped; waits for the running ones.
  void release(size_t i) {
    std::unique_lock<std::mutex> lock(mutex_);
    state_[i].released = true;
    changed_.wait(lock, [&] { return state_[i].running == 0; });
  }

private:
  static constexpr size_t kCompile = ~size_t(0);
  struct Task {
    size_t item;
    size_t kernel; ///< kCompile: the item's compile
  };
  struct State {
    bool compiled = false;
    bool released = false;
    int running = 0; ///< kernels under way
  };

  void work() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stop_ && next_ < tasks_.size()) {
      Task task = tasks_[next_++];
      State &s = state_[task.item];
      if (task.kernel == kCompile) {
        lock.unlock();
        compile_(task.item);
        lock.lock();
        s.compiled = true;
        changed_.notify_all();
        continue;
      }
      // Compiles are handed out first: this one is under way.
      changed_.wait(lock, [&] { return stop_ || s.compiled; });
      if (stop_ || s.released)
        continue;
      ++s.running;
      lock.unlock();
      kernel_(task.item, task.kernel);
      lock.lock();
      --s.running;
      changed_.notify_all();
    }
  }

  std::function<void(size_t)> compile_;
  std::function<void(size_t, size_t)> kernel_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Task> tasks_;
  size_t next_ = 0;
  std::vector<State> state_;
  bool stop_ = false;
  std::vector<std::thread> pool_;
};

} // namespace gputest

#endif // MSCCLC_TEST_AHEAD_COMPILER_H
