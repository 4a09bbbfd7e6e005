#pragma once
// The stop rules of every exploration, model and live, applied before each execution in this
// order: the execution budget, an interrupt and the time limit (Budget; exploration.h's one
// sequential loop applies them all, each worker of a split model exploration, explore_split.h,
// the last two, the budget being dealt out). A proving strategy (dfs, dpor) whose space is
// exactly the budget has covered it: asking it for one more execution says so, and the
// exploration is exhausted rather than cut short. And the words for how a search stopped and what
// it covered, one sentence for every command. What a search earned against its expectations is
// verdict.h's rule (results::judge), not the loop's.
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "sched/strategy.h"

namespace racelab::sched {

enum class StopReason { kBudget, kExhausted, kTimeLimit, kInterrupted };
const char* stop_reason_name(StopReason r);  // "budget", "exhausted": reports' words
std::optional<StopReason> parse_stop_reason(std::string_view name);  // a report's word back
// How a stop reads in a sentence, model and live alike: "the execution cap", "the time limit",
// "an interrupt" ("the end of the space" for kExhausted).
const char* stop_reason_words(StopReason r);

// What a search covered, the one sentence every command prints (the model's explore and suite, a
// live search), from the strategy and how the search stopped:
//   exhaustive: every interleaving class explored (dpor(unbounded)): 6 executions, 6 classes, 0
//     redundant
//   exhaustive: every interleaving class explored or met at a state explored before
//     (dpor(unbounded, states)): 172 executions (6 complete, 71 at a state explored before, 95
//     sleep-set blocked), 561 states
//   exhaustive: every reachable state explored (states(symmetry)): 80 executions, 61 states
//   exhaustive within the bound (dfs(max_preemptions=2)): 41 executions
//   exhaustive, not a proof: the search ended, but it misses interleaving classes on some
//     programs (dpor(unbounded, symmetry, source sets)): 15 executions, 15 classes
//   cut short by the execution cap after 50 executions (dfs(max_preemptions=2), cap 50) before
//     covering the bounded space: not a proof
//   sampled 2000 executions (pct(depth=3, seed=1)), not a proof
//   sampled 12 of 100 executions (random(seed=1); stopped by the time limit), not a proof
struct SearchCover {
  std::string strategy;  // the strategy's describe()
  std::uint64_t executions = 0;
  std::uint64_t cap = 0;  // the execution cap
  StopReason stop = StopReason::kBudget;
  bool proves = false;   // a proving strategy (dfs, dpor): exhausting its space is a proof
  bool bounded = false;  // that space is bounded (dfs's preemption bound)
  std::optional<Strategy::Classes> classes;  // dpor's interleaving classes
  std::optional<std::uint64_t> states;       // the states strategy's distinct states
  // Its search misses interleaving classes on some programs (dpor --source-sets, issue 35:
  // !proves_every_order of its params): its end is a count, not a proof.
  bool misses_classes = false;
};
std::string coverage_sentence(const SearchCover& c);

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
    return cut();
  }

  // An interrupt or the time limit, whatever the execution: what stops every worker of a split
  // exploration at once.
  std::optional<StopReason> cut() const {
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

}  // namespace racelab::sched
