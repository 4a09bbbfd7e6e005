#pragma once
// The parts of a split exploration (--jobs, --shard), private to src/sched: how workers stop, and
// the two split searches: execution indices for the sampling strategies (explore_split.cc),
// subtrees for the strategies that search a tree, as their Splitter cuts it
// (explore_subtrees.cc). Both count into the ExploreResult (a Tally), keep findings with the
// model's keep policy (KeepFirstOfEachKind: each worker its own, by position in the single-worker
// order, merged at the end) and stop at Budget's rules (Workers::before).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "sched/explore.h"

namespace racelab::sched::split {

// Stops every worker at the next execution: the budget is no reason (each worker knows its own
// share), an interrupt or the time limit is.
struct StopFlag {
  std::atomic<int> reason{-1};
  void set(StopReason r) {
    int expected = -1;
    reason.compare_exchange_strong(expected, static_cast<int>(r));
  }
  bool raised() const { return reason.load(std::memory_order_relaxed) >= 0; }
};

class Workers {
 public:
  Workers(const ExploreOptions& o, StopFlag& stop) : o_(o), stop_(stop), budget_(o.budget()) {}

  double elapsed() const { return budget_.elapsed(); }
  // Called before each execution; false when the run must stop (an interrupt or the time limit:
  // Budget::cut, or another worker met one).
  bool go() {
    if (const auto cut = budget_.cut()) stop_.set(*cut);
    return !stop_.raised();
  }
  // Budget::before for the execution at `position` in the single-worker order (or in a shard's
  // subtree): nullopt to run it, kBudget or kExhausted past the execution cap, and an interrupt or
  // the time limit, which stops every worker.
  std::optional<StopReason> before(std::uint64_t position, Strategy& strategy, bool proves) {
    const auto stop = budget_.before(position, strategy, proves);
    if (stop == StopReason::kInterrupted || stop == StopReason::kTimeLimit) stop_.set(*stop);
    return stop;
  }
  // Runs `body(worker)` on jobs threads; the calling thread reports progress meanwhile.
  template <class Body>
  void run(unsigned jobs, Body body, const std::atomic<std::uint64_t>& executions,
           const std::atomic<std::size_t>& kinds) {
    std::vector<std::thread> threads;
    std::exception_ptr error;
    std::mutex error_mutex;
    unsigned running = jobs;
    std::mutex done_mutex;
    std::condition_variable done;
    for (unsigned w = 0; w < jobs; ++w) {
      threads.emplace_back([&, w] {
        try {
          body(w);
        } catch (...) {
          std::lock_guard<std::mutex> lock(error_mutex);
          if (!error) error = std::current_exception();
          stop_.set(StopReason::kInterrupted);
        }
        std::lock_guard<std::mutex> lock(done_mutex);
        --running;
        done.notify_all();
      });
    }
    {
      std::unique_lock<std::mutex> lock(done_mutex);
      while (!done.wait_for(lock, std::chrono::milliseconds(100), [&] { return running == 0; })) {
        if (o_.progress) o_.progress({executions.load(), o_.iterations, kinds.load(), elapsed()});
      }
    }
    for (auto& t : threads) t.join();
    if (error) std::rethrow_exception(error);
  }

 private:
  const ExploreOptions& o_;
  StopFlag& stop_;
  const Budget budget_;
};

// Shrinks every found kind's schedule (explore.cc).
void shrink_all(Subject& subject, ExploreResult& out, const ExploreOptions& options);
// The end of every exploration, split or not (explore.cc): shrinks what was found, re-checks
// determinism where asked, records the seconds and reports the final progress.
void finish(Subject& subject, ExploreResult& out, const ExploreOptions& options, double seconds);

// The strategies without a Splitter (random, PCT, POS, SURW): execution indices dealt to shards
// and taken by the jobs in chunks.
ExploreResult explore_indices(const SubjectFactory& make, const ExploreOptions& o);
// The strategies with one (dfs, dpor): the subtrees below the top part of their search, dealt to
// shards by index and taken in order by the jobs of each, under one budget in one process
// (explore_subtrees.cc).
ExploreResult explore_subtrees(const SubjectFactory& make, const ExploreOptions& o,
                               const Splitter& splitter);

}  // namespace racelab::sched::split
