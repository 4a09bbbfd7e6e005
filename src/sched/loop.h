#pragma once
// The one sequential exploration loop, model (explore.cc) and live (src/live/search.cc), and the
// stop rules it applies before each execution, in this order: the execution budget, an interrupt
// and the time limit. A proving strategy (dfs, dpor) whose space is exactly the budget has covered
// it: asking it for one more execution says so, and the exploration is exhausted rather than cut
// short. What each world does with an execution (the model keeps the first of every finding
// kind; a live search stops at a failure) is the caller's `after`. The parallel and sharded model
// explorations (explore_split.h) deal executions to workers instead; each worker applies the same
// rules through Budget.
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>

#include "sched/strategy.h"

namespace racelab::sched {

enum class StopReason { kBudget, kExhausted, kTimeLimit, kInterrupted };
const char* stop_reason_name(StopReason r);  // "budget", "exhausted": reports' words
// How a stop reads in a sentence, model and live alike: "the execution cap", "the time limit",
// "an interrupt" ("the end of the space" for kExhausted).
const char* stop_reason_words(StopReason r);

// The one rule for an absence claimed by a search (the model's ScenarioRun::verdict, a live
// search's live::judge): it is proven only by a proving strategy (dfs, dpor) that covered its
// whole (bounded) space. A proving search cut short is then not a pass but inconclusive; a
// sampling strategy never claims a proof, so its absence is a sample's.
inline bool absence_cut_short(bool proves, StopReason stop) {
  return proves && stop != StopReason::kExhausted;
}

class Budget {
 public:
  // `executions`: the cap; `time_limit_s`: 0 for none; `interrupted`: may be empty.
  Budget(std::uint64_t executions, double time_limit_s, std::function<bool()> interrupted)
      : executions_(executions),
        time_limit_s_(time_limit_s),
        interrupted_(std::move(interrupted)),
        start_(std::chrono::steady_clock::now()) {}

  // Before execution `i`: nullopt to run it, or why the exploration stops. `proves`: the strategy
  // can say it is exhausted (strategy_proves, and not a replay).
  std::optional<StopReason> before(std::uint64_t i, Strategy& strategy, bool proves) const {
    if (i >= executions_)
      return proves && (strategy.exhausted() || !strategy.begin_execution(i))
                 ? StopReason::kExhausted
                 : StopReason::kBudget;
    if (interrupted_ && interrupted_()) return StopReason::kInterrupted;
    if (time_limit_s_ > 0 && elapsed() >= time_limit_s_) return StopReason::kTimeLimit;
    return std::nullopt;
  }

  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::uint64_t executions_;
  double time_limit_s_;
  std::function<bool()> interrupted_;
  std::chrono::steady_clock::time_point start_;
};

// Runs executions 0, 1, ... until `budget` stops them: `run(i)` runs execution i and returns an
// optional result (nullopt: the strategy has nothing left, the space is exhausted); `after(i,
// result)` sees each result (it may move it away) and returns false to end the loop there.
// Returns why the loop stopped, or nullopt when `after` ended it.
template <class Run, class After>
std::optional<StopReason> run_loop(const Budget& budget, Strategy& strategy, bool proves, Run&& run,
                                   After&& after) {
  for (std::uint64_t i = 0;; ++i) {
    if (const auto stop = budget.before(i, strategy, proves)) return stop;
    auto result = run(i);
    if (!result) return StopReason::kExhausted;
    if (!after(i, *result)) return std::nullopt;
  }
}

}  // namespace racelab::sched
