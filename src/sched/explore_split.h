#pragma once
// The parts of a split exploration (--jobs, --shard), private to src/sched: how findings are kept
// in the single-worker order whatever the worker that met them, how workers stop, and the three
// split searches (execution indices for the sampling strategies, DFS subtrees dealt to shards, DFS
// subtrees shared and re-split among the jobs of one process, dpor subtrees below a top part
// explored in full).
#include <algorithm>
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
// minor, pos) is (execution, 0, finding) for random and PCT, (subtree, execution within it,
// finding) for DFS.
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
    const auto& fs = run.findings();
    for (std::size_t pos = 0; pos < fs.size(); ++pos) {
      auto key = std::make_tuple(major, minor, pos);
      auto it = by_kind.find(fs[pos].kind);
      if (it != by_kind.end() && it->second.key <= key) continue;
      if (choices.empty()) choices = run.choices();
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
  Workers(const ExploreOptions& o, StopFlag& stop)
      : o_(o), stop_(stop), t0_(std::chrono::steady_clock::now()) {}

  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  }
  // Called before each execution; false when the run must stop.
  bool go() {
    if (o_.interrupt != nullptr && o_.interrupt->load(std::memory_order_relaxed))
      stop_.set(StopReason::kInterrupted);
    if (o_.time_limit_s > 0 && elapsed() >= o_.time_limit_s) stop_.set(StopReason::kTimeLimit);
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
  std::chrono::steady_clock::time_point t0_;
};

// What a worker keeps of one piece of a split search (a DFS subtree or piece of one, a dpor
// subtree), execution by execution, until fold() places the pieces in the single-worker order.
// One worker writes a piece; `ran` may be read by the others meanwhile (the budget).
struct PieceRuns {
  std::uint64_t index = 0;                 // its subtree's index in the whole search (shards)
  std::atomic<std::uint64_t> ran{0};       // executions so far (only grows)
  std::vector<std::uint32_t> step_counts;  // per execution
  std::vector<std::uint64_t> fingerprints;
  std::vector<char> redundant;  // per execution: abandoned as sleep-set blocked (dpor)
  bool complete = false;        // every execution of the piece ran
  Hits hits;                    // keyed (0, execution within the piece, finding)
};

// Runs execution `local` of a piece under `strategy` and records it in `piece` (and counts it in
// `executions`); false, marking the piece complete, when the strategy has nothing left.
bool run_piece_execution(Subject& subject, Strategy& strategy, PieceRuns& piece,
                         std::uint64_t local, const RunOptions& run,
                         std::atomic<std::uint64_t>& executions);

// The pieces placed in the single-worker order and counted as one worker would count them. One
// process (`sharded` false) cuts the order at `cap` and keys each finding by its piece's place; a
// shard reports each piece up to `cap` under its subtree index, for racelab merge to place. The
// search is exhausted when every piece ran to its end within the cap.
struct Fold {
  std::uint64_t executions = 0;
  std::uint64_t steps = 0;
  std::uint64_t redundant = 0;
  std::uint64_t total = 0;  // every execution the pieces ran, counted or not
  bool exhausted = true;
  Coverage coverage;
  Hits hits;
  std::vector<std::uint64_t> offsets;  // each piece's first execution in the order
  std::vector<DfsSubtree> subtrees;    // a shard's: each piece as counted
};
template <class Pieces>  // a range of PieceRuns, or of pointers to them, in order
Fold fold(const Pieces& pieces, std::uint64_t cap, bool sharded) {
  Fold f;
  std::uint64_t place = 0;
  for (const auto& item : pieces) {
    const PieceRuns& p = [&]() -> const PieceRuns& {
      if constexpr (requires { *item; }) {
        return *item;
      } else {
        return item;
      }
    }();
    f.offsets.push_back(f.total);
    const std::uint64_t room = sharded ? cap : f.total < cap ? cap - f.total : 0;
    const std::uint64_t counted = std::min<std::uint64_t>(room, p.step_counts.size());
    std::uint64_t steps = 0;
    std::uint64_t redundant = 0;
    for (std::uint64_t e = 0; e < counted; ++e) {
      steps += p.step_counts[e];
      f.coverage.add(p.fingerprints[e]);
      if (e < p.redundant.size()) redundant += p.redundant[e];
    }
    f.steps += steps;
    f.redundant += redundant;
    f.executions += counted;
    if (sharded) f.subtrees.push_back({p.index, counted, steps, p.complete, redundant});
    for (const auto& [kind, h] : p.hits.by_kind) {
      if (std::get<1>(h.key) >= room) continue;
      Hit keyed = h;
      std::get<0>(keyed.key) = sharded ? p.index : place;
      f.hits.offer(keyed);
    }
    f.total += p.step_counts.size();
    f.exhausted = f.exhausted && p.complete;
    ++place;
  }
  f.exhausted = f.exhausted && (sharded || f.total <= cap);
  return f;
}

// Found kinds, in single-worker discovery order, re-executed on `subject` from their choices, into
// out.found. dfs_shard: keys are (subtree, execution within it); otherwise `dfs_offsets[major] +
// minor` (DFS in one shard) or `major` (execution indices) is the execution number.
void collect_found(Subject& subject, const Hits& hits, const ExploreOptions& o, ExploreResult& out,
                   bool dfs_shard, const std::vector<std::uint64_t>& dfs_offsets);

// Shrinks every found kind's schedule (explore.cc).
void shrink_all(Subject& subject, ExploreResult& out, const ExploreOptions& options);
// The end of every exploration, split or not (explore.cc): shrinks what was found, re-checks
// determinism where asked, records the seconds and reports the final progress.
void finish(Subject& subject, ExploreResult& out, const ExploreOptions& options, double seconds);

// Prefixes deep enough to give every worker of every shard several subtrees; `depth` receives
// their length.
std::vector<DfsPrefix> split_dfs(Subject& subject, const ExploreOptions& o, std::size_t& depth);

// Random, PCT, POS, SURW: execution indices dealt to shards and taken by the jobs in chunks.
ExploreResult explore_indices(const SubjectFactory& make, const ExploreOptions& o);
// DFS across shards: fixed subtrees dealt by index, reported for `racelab merge`.
ExploreResult explore_dfs_shards(const SubjectFactory& make, const ExploreOptions& o);
// DFS in one process with several jobs: subtrees taken in order and split again while they run,
// under one budget (explore_dfs.cc).
ExploreResult explore_dfs_jobs(const SubjectFactory& make, const ExploreOptions& o);

// dpor's top part, explored in full to the first depth with enough leaves for any split (or the
// whole space): its prefixes, in order; `depth` receives the depth (explore_dpor.cc).
DporPrefixes split_dpor(Subject& subject, const ExploreOptions& o, std::size_t& depth);
// dpor across jobs and shards: the subtrees of split_dpor's prefixes.
ExploreResult explore_dpor_split(const SubjectFactory& make, const ExploreOptions& o);

}  // namespace racelab::sched::split
