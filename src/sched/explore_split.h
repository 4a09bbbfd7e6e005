#pragma once
// The parts of a split exploration (--jobs, --shard), private to src/sched: how findings are kept
// in the single-worker order whatever the worker that met them, how workers stop, and the two
// split searches: execution indices for the sampling strategies (explore_split.cc), subtrees for
// the strategies that search a tree, as their Splitter cuts it (explore_subtrees.cc).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "sched/explore.h"

namespace racelab::sched::split {

// The first occurrence of each finding kind, by position in the single-worker order: (major,
// minor, pos) is (execution, 0, finding) split by execution index, (subtree, execution within it,
// finding) split by subtree.
struct Hit {
  std::tuple<std::uint64_t, std::uint64_t, std::size_t> key;
  Finding finding;
  std::uint64_t preemptions = 0;
  std::vector<ThreadId> choices;
};

struct Hits {
  std::map<std::string, Hit> by_kind;

  // Keeps `h` when it comes before what is kept for its kind.
  void offer(const Hit& h) {
    auto it = by_kind.find(h.finding.kind);
    if (it == by_kind.end() || h.key < it->second.key) by_kind[h.finding.kind] = h;
  }
  void add(std::uint64_t major, std::uint64_t minor, const ExecutionResult& run) {
    std::vector<ThreadId> choices;
    const auto& fs = run.findings;
    for (std::size_t pos = 0; pos < fs.size(); ++pos) {
      auto key = std::make_tuple(major, minor, pos);
      auto it = by_kind.find(fs[pos].kind);
      if (it != by_kind.end() && it->second.key <= key) continue;
      if (choices.empty()) choices = run.choices;
      offer(Hit{key, fs[pos], run.preemptions, choices});
    }
  }
  void merge(const Hits& other) {
    for (const auto& [kind, h] : other.by_kind) offer(h);
  }
};

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
  // Budget::cut; the execution budget is each worker's own share).
  bool go() {
    if (const auto cut = budget_.cut()) stop_.set(*cut);
    return !stop_.raised();
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

// Found kinds, in single-worker discovery order, re-executed on `subject` from their choices, into
// out.found. by_subtree (a shard's subtrees): keys are (subtree, execution within it); otherwise
// `offsets[major] + minor` (pieces in one process) or `major` (execution indices) is the
// execution number.
void collect_found(Subject& subject, const Hits& hits, const ExploreOptions& o, ExploreResult& out,
                   bool by_subtree, const std::vector<std::uint64_t>& offsets);

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
