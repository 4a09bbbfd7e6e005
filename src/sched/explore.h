#pragma once
// Exploration: many executions of one subject under one strategy, collecting the first execution
// of every finding kind. Executions are independent and numbered; execution i of a seeded strategy
// is the same wherever and whenever it runs.
//
// The loop stops when the iteration budget is spent, the strategy is exhausted (DFS), the time
// limit passes or the interrupt flag is raised (SIGINT); in every case what was found so far is
// returned, shrunk, so that callers can write it.
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sched/engine.h"
#include "sched/strategies/strategies.h"

namespace racelab::sched {

struct ExploreProgress {
  std::uint64_t executions = 0;
  std::uint64_t iterations = 0;  // the budget
  std::size_t kinds_found = 0;
  double seconds = 0;
};

struct ExploreOptions {
  StrategyParams strategy;
  std::uint64_t iterations = 1000;
  double time_limit_s = 0;  // 0: none
  RunOptions run;
  bool shrink = true;
  const std::atomic<bool>* interrupt = nullptr;
  std::function<void(const ExploreProgress&)> progress;  // called about every 100 ms
};

struct FoundKind {
  Finding finding;
  std::uint64_t execution = 0;  // the first execution that found it
  std::uint64_t preemptions = 0;
  std::uint64_t original_preemptions = 0;
  ExecutionResult result;  // the (shrunk) execution
};

enum class StopReason { kBudget, kExhausted, kTimeLimit, kInterrupted };
const char* stop_reason_name(StopReason r);

struct ExploreResult {
  std::string strategy;  // describe() of the strategy
  std::uint64_t executions = 0;
  std::uint64_t steps = 0;
  double seconds = 0;
  StopReason stop = StopReason::kBudget;
  std::vector<FoundKind> found;  // in order of discovery

  bool exhausted() const { return stop == StopReason::kExhausted; }
  const FoundKind* find(std::string_view kind) const;
};

ExploreResult explore(Subject& subject, const ExploreOptions& options);

}  // namespace racelab::sched
