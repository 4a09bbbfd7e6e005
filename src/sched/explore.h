#pragma once
// Exploration of a model subject: many executions of it under one strategy, collecting the first
// execution of every finding kind. Executions are independent and numbered; execution i of a
// seeded strategy is the same wherever and whenever it runs.
//
// One job runs exploration.h's loop, the one a live search runs too, with the model's runner
// (ModelRunner) and keep policy (KeepFirstOfEachKind); --jobs and --shard deal the executions to
// workers instead (explore_split.h). Either stops when the iteration budget is spent, the
// strategy is exhausted (DFS), the time limit passes or the interrupt flag is raised (SIGINT); in
// every case what was found so far is returned, shrunk, so that callers can write it.
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sched/coverage.h"
#include "sched/engine.h"
#include "sched/exploration.h"
#include "sched/loop.h"
#include "sched/strategies/strategies.h"

namespace racelab::sched {

struct ExploreProgress {
  std::uint64_t executions = 0;
  std::uint64_t iterations = 0;  // the budget
  std::size_t kinds_found = 0;
  double seconds = 0;
};

// How the executions of one exploration are split. Execution indices (random, PCT) or DFS and dpor
// subtrees are dealt to shards by index modulo `shards`; within a shard, `jobs` threads take them
// in order. Findings are kept by their position in the single-worker order, so the result is the
// same for any jobs and, once shards are merged, for any shards.
struct Partition {
  std::uint64_t shard = 0;
  std::uint64_t shards = 1;
  unsigned jobs = 1;
  bool split() const { return shards > 1 || jobs > 1; }
};

struct ExploreOptions {
  StrategyParams strategy;
  Partition partition;
  std::uint64_t iterations = 1000;
  double time_limit_s = 0;  // 0: none
  RunOptions run;
  bool shrink = true;
  // Re-execute every finding's (shrunk) schedule and compare the two traces step by step.
  bool check_determinism = false;
  const std::atomic<bool>* interrupt = nullptr;
  std::function<void(const ExploreProgress&)> progress;  // called about every 100 ms
  // A sequential exploration ends after the first execution with a finding this accepts (its
  // stop is then kBudget: the space was not covered); empty: it never ends for a finding. racelab
  // replay against a fix stops at the first continuation that reaches the recorded kind.
  std::function<bool(const Finding&)> stop_at;

  // The stop rules of these options (loop.h), its clock started now.
  Budget budget() const;
};

struct FoundKind {
  Finding finding;
  std::uint64_t execution = 0;  // the first execution that found it (DFS shard: within its subtree)
  std::optional<std::uint64_t> subtree;  // DFS split across shards: the subtree it is in
  std::uint64_t preemptions = 0;
  std::uint64_t original_preemptions = 0;
  ExecutionResult result;  // the (shrunk) execution
};

// The model's runner for exploration.h: execution i of `subject` (run_execution), and the re-run
// of a recorded one, which gives the same execution again (a deterministic subject).
class ModelRunner {
 public:
  ModelRunner(Subject& subject, const RunOptions& options) : subject_(subject), options_(options) {}
  std::optional<ExecutionResult> run(Strategy& strategy, std::uint64_t execution) const {
    return run_execution(subject_, strategy, execution, options_);
  }
  // The execution whose thread at each step was `choices` (ExecutionResult::choices), again.
  ExecutionResult rerun(const std::vector<ThreadId>& choices) const;
  static std::uint64_t steps(const ExecutionResult& r) { return r.exec->steps().size(); }
  static std::uint64_t fingerprint(const ExecutionResult& r) {
    return handoff_fingerprint(*r.exec);
  }

 private:
  Subject& subject_;
  RunOptions options_;
};

// `finding` as first found in execution `execution`, which made `preemptions` preemptions; `result`
// is that execution (or its re-run).
FoundKind first_found(const Finding& finding, std::uint64_t execution, std::uint64_t preemptions,
                      ExecutionResult result);

// Where a finding lies in the single-worker order, the order in which one job meets it: the
// `place`-th finding of execution `execution`. Where a shard of a split search reports its
// subtrees by index (explore_subtrees.cc), `execution` counts within subtree `subtree`, which
// racelab merge places; otherwise it is the execution's number in the whole exploration.
struct FindingPosition {
  std::optional<std::uint64_t> subtree;
  std::uint64_t execution = 0;
  std::size_t place = 0;
  auto operator<=>(const FindingPosition&) const = default;
};

// The model's keep policy, for exploration.h's loop and for the split explorations alike: the
// first execution of every finding kind in the single-worker order, and the exploration always
// goes on. The sequential loop gives it the executions in order (keep); each worker of a split
// exploration gives it those it runs, at their positions (offer), and the workers' policies are
// merged (merge) in any order: the earliest position of each kind wins, so what is kept is the
// same for any jobs and shards, and the same as one job keeps.
//
// For each kind it keeps the finding, its position, the execution's preemptions and its
// choices; found() turns them into FoundKinds in position order. Each kind owns its execution (it
// is shrunk for that kind): the sequential loop's record is kept itself, by the last new kind it
// shows, and every other kind gets a re-run of its choices, on the subject the result is for (a
// split worker's subject and records are gone by then).
class KeepFirstOfEachKind {
 public:
  struct First {
    FindingPosition at;
    Finding finding;
    std::uint64_t preemptions = 0;
    std::vector<ThreadId> choices;
    std::optional<ExecutionResult> record;  // the execution itself, where it was kept (keep)
  };

  // KeepPolicy (exploration.h): execution `execution` of a sequential exploration.
  bool keep(std::uint64_t execution, ExecutionResult& run);
  // The findings of `run`, executed at `at` (its `place` ignored: each finding's own), where they
  // come before what is kept for their kinds; the execution is re-run at the end.
  void offer(FindingPosition at, const ExecutionResult& run);
  // Keeps `first` where it comes before what is kept for its kind.
  void offer(First first);
  // Every kind `other` kept, at the position `moved(position)` gives (nullopt: left out), where it
  // comes before what is kept for its kind: a worker's policy, or a piece of a split search placed
  // in the single-worker order.
  template <class Move>
  void merge(KeepFirstOfEachKind&& other, Move moved) {
    for (auto& [kind, first] : other.firsts_) {
      if (const std::optional<FindingPosition> at = moved(first.at)) {
        first.at = *at;
        offer(std::move(first));
      }
    }
    other.firsts_.clear();
  }
  void merge(KeepFirstOfEachKind&& other) {
    merge(std::move(other), [](const FindingPosition& at) { return std::optional(at); });
  }

  std::size_t kinds() const { return firsts_.size(); }
  const std::map<std::string, First>& firsts() const { return firsts_; }
  // What was kept, in position order, each kind with its own execution: the record kept for it
  // or a re-run of its choices by `runner`.
  std::vector<FoundKind> found(const ModelRunner& runner) &&;

 private:
  std::map<std::string, First> firsts_;  // by kind
};

// The single-worker order of a split search (dfs, dpor: explore_subtrees.cc), built piece by
// piece (its subtrees, in order), and the budget's cut at `cap` executions: one process folds its
// workers' pieces with it, racelab merge its shards' subtrees (src/report/merge.cc), so that both
// place findings and judge exhaustion alike. A piece's execution e is number offset + e in the
// order, and counts only before the cut.
class SplitOrder {
 public:
  explicit SplitOrder(std::uint64_t cap) : cap_(cap) {}
  // Appends a piece that ran `executions` (`complete`: to its end); its first execution's number.
  std::uint64_t add(std::uint64_t executions, bool complete) {
    const std::uint64_t offset = total_;
    total_ += executions;
    complete_ = complete_ && complete;
    return offset;
  }
  // How many executions of a piece starting at `offset` come before the cut.
  std::uint64_t room(std::uint64_t offset) const { return offset < cap_ ? cap_ - offset : 0; }
  // Where `at` (a position within the piece starting at `offset`) lies in the order; nullopt
  // beyond the cut.
  std::optional<FindingPosition> place(const FindingPosition& at, std::uint64_t offset) const {
    if (at.execution >= room(offset)) return std::nullopt;
    return FindingPosition{std::nullopt, offset + at.execution, at.place};
  }
  std::uint64_t total() const { return total_; }  // every execution, counted or not
  bool within_cap() const { return total_ <= cap_; }
  bool complete() const { return complete_; }  // every piece ran to its end
  // Every piece ran to its end within the cap: the search covered its bounded space.
  bool exhausted() const { return complete() && within_cap(); }

 private:
  std::uint64_t cap_;
  std::uint64_t total_ = 0;
  bool complete_ = true;
};

// One DFS or dpor subtree run by this shard (split explorations).
struct DfsSubtree {
  std::uint64_t index = 0;
  std::uint64_t executions = 0;
  std::uint64_t steps = 0;
  bool complete = false;        // every execution of the subtree ran (not cut by the budget)
  std::uint64_t redundant = 0;  // dpor: executions abandoned as sleep-set blocked
};

// A model exploration's result: what every exploration counts (Explored: executions, steps,
// seconds, why it stopped, the interleaving classes seen), and what only the model reports.
struct ExploreResult : Explored {
  std::string strategy;          // describe() of the strategy
  std::vector<FoundKind> found;  // in order of discovery (the single-worker order)
  // --check-determinism: schedules re-executed, and every difference ("<kind>: step k: ...").
  std::size_t determinism_checked = 0;
  std::vector<std::string> determinism_failures;
  // DFS split: the split depth, the number of subtrees of the whole search, and this run's.
  std::size_t split_depth = 0;
  std::uint64_t subtree_count = 0;
  std::vector<DfsSubtree> subtrees;
  // dpor: the interleaving classes explored and the executions abandoned as redundant.
  std::optional<Strategy::Classes> classes;
  // states: the distinct states explored (Strategy::states).
  std::optional<std::uint64_t> states;
  // Whether `coverage` (Tally's) counts every execution's interleaving class: not in a merge of
  // shards that lack the counts, or a dfs merge cut by the budget (racelab merge).
  bool coverage_counted = true;

  // The distinct per-resource hand-off orders the executions showed, with the Good-Turing and
  // Chao1 estimates of what they have not (coverage.h); nullopt where they were not counted.
  std::optional<CoverageSummary> interleavings() const {
    if (!coverage_counted) return std::nullopt;
    return coverage.summary();
  }
  const FoundKind* find(std::string_view kind) const;
};

// Re-executes every finding's schedule and records, in out.determinism_*, whether the second
// trace equals the first step for step (it must, for a deterministic subject and scheduler).
void check_determinism(Subject& subject, ExploreResult& out, const RunOptions& run);

// Sequential exploration of one subject (options.partition must not split).
ExploreResult explore(Subject& subject, const ExploreOptions& options);

// Any partition: every worker thread gets its own subject from `make`. A strategy with a Splitter
// (strategies/split.h) splits into subtrees (explore_subtrees.cc), the others by execution index.
// A split dpor explores its first decisions in full to a depth that depends on the subject alone,
// so that the subtrees below are independent (strategies/dpor.cc): it explores the same classes
// as one stateless job without symmetry, with more redundant executions, and the same for any
// jobs and shards (one job keeps dpor's state cache and symmetry, which a split turns off).
using SubjectFactory = std::function<std::unique_ptr<Subject>()>;
ExploreResult explore(const SubjectFactory& make, const ExploreOptions& options);

}  // namespace racelab::sched
