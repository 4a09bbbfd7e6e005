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

// The model's keep policy for exploration.h: the first execution of every finding kind, in order
// of discovery, and the exploration always goes on. Each kind owns its execution (it is shrunk
// for that kind): an execution that shows several new kinds goes to the last of them, and each
// of the others gets a re-run of it.
class KeepFirstOfEachKind {
 public:
  explicit KeepFirstOfEachKind(const ModelRunner& runner) : runner_(&runner) {}
  bool keep(std::uint64_t execution, ExecutionResult& run);
  std::vector<FoundKind> found;  // in order of discovery

 private:
  const ModelRunner* runner_;
};

// One DFS or dpor subtree run by this shard (split explorations).
struct DfsSubtree {
  std::uint64_t index = 0;
  std::uint64_t executions = 0;
  std::uint64_t steps = 0;
  bool complete = false;        // every execution of the subtree ran (not cut by the budget)
  std::uint64_t redundant = 0;  // dpor: executions abandoned as sleep-set blocked
};

struct ExploreResult {
  std::string strategy;  // describe() of the strategy
  std::uint64_t executions = 0;
  std::uint64_t steps = 0;
  double seconds = 0;
  StopReason stop = StopReason::kBudget;
  std::vector<FoundKind> found;  // in order of discovery
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
  // Every exploration: the distinct per-resource hand-off orders its executions showed, with the
  // Good-Turing and Chao1 estimates of what it has not seen (coverage.h). nullopt where it could
  // not be counted (a merge of shards that lack the counts, or a dfs merge cut by the budget).
  std::optional<CoverageSummary> interleavings;
  // A shard of a split run (Partition::shards > 1): the classes and their counts, for merge.
  std::shared_ptr<const Coverage> interleaving_counts;

  bool exhausted() const { return stop == StopReason::kExhausted; }
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
// as one job, with more redundant executions, and the same for any jobs and shards.
using SubjectFactory = std::function<std::unique_ptr<Subject>()>;
ExploreResult explore(const SubjectFactory& make, const ExploreOptions& options);

}  // namespace racelab::sched
