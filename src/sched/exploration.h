#pragma once
// The one sequential exploration, for both kinds of subject: executions 0, 1, ... of one subject
// under one strategy, until the budget (loop.h's stop rules) or the keep policy ends them.
//
// What differs between the model and a live program is two parts, given as types:
// - A *runner* runs execution i under the strategy and returns its record (nullopt when the
//   strategy has nothing left: the space is exhausted), and says how many steps the record took
//   and which interleaving class it shows (coverage.h):
//     std::optional<Record> run(Strategy& strategy, std::uint64_t execution);
//     std::uint64_t steps(const Record& record);
//     std::uint64_t fingerprint(const Record& record);
//   The model's is sched::ModelRunner (explore.h), a live subject's live::LiveRunner
//   (src/live/search.h).
// - A *keep policy* sees every record, in execution order, keeps what it wants of it (it may move
//   the record away) and says whether the exploration goes on:
//     bool keep(std::uint64_t execution, Record& record);  // false: end here
//   The model keeps the first execution of every finding kind and always goes on
//   (sched::KeepFirstOfEachKind, explore.h); a live search stops at the first failure
//   (live::StopAtFailure, src/live/search.h).
//
// Everything else is this file's, for both: the stop rules (Budget), counting the executions and
// their steps, the interleaving classes they showed, and the progress after each execution. The
// split model explorations (--jobs, --shard: explore_split.h) deal executions to workers instead,
// and count them with the same Tally, ModelRunner, keep policy and Budget.
#include <concepts>
#include <cstdint>
#include <optional>
#include <utility>

#include "sched/coverage.h"
#include "sched/loop.h"
#include "sched/strategy.h"

namespace racelab::sched {

// What an exploration counts, execution by execution.
struct Tally {
  std::uint64_t executions = 0;
  std::uint64_t steps = 0;  // the runner's: a model execution's steps, a live one's decisions
  Coverage coverage;        // the interleaving classes the executions showed

  void add(std::uint64_t execution_steps, std::uint64_t fingerprint) {
    ++executions;
    steps += execution_steps;
    coverage.add(fingerprint);
  }
  void merge(const Tally& other) {
    executions += other.executions;
    steps += other.steps;
    coverage.merge(other.coverage);
  }
};

// What an exploration did, whatever it kept: its counts, its seconds and why it stopped. The one
// result of every exploration: the sequential loop's Exploration below, and the model's
// ExploreResult (explore.h), which adds what only the model reports (the findings, a split's
// subtrees, dpor's classes) and which the split explorations count into with the same Tally.
struct Explored : Tally {
  double seconds = 0;
  // Why the budget stopped the exploration (loop.h); kBudget also where the keep policy ended it
  // (the policy knows that it did).
  StopReason stop = StopReason::kBudget;

  bool exhausted() const { return stop == StopReason::kExhausted; }
  bool interrupted() const { return stop == StopReason::kInterrupted; }
  bool time_limit() const { return stop == StopReason::kTimeLimit; }
};

// What the sequential loop did and what its keep policy kept (`kept`, the policy itself).
template <class Keep>
struct Exploration : Explored {
  explicit Exploration(Keep keep = Keep()) : kept(std::move(keep)) {}
  Keep kept;
};

template <class R>
concept ExecutionRunner = requires(R& runner, Strategy& strategy, std::uint64_t execution) {
  { runner.run(strategy, execution).has_value() } -> std::same_as<bool>;
  { runner.steps(*runner.run(strategy, execution)) } -> std::convertible_to<std::uint64_t>;
  { runner.fingerprint(*runner.run(strategy, execution)) } -> std::convertible_to<std::uint64_t>;
};

template <class K, class Record>
concept KeepPolicy = requires(K& keep, std::uint64_t execution, Record& record) {
  { keep.keep(execution, record) } -> std::same_as<bool>;
};

// Runs executions 0, 1, ... of `runner`'s subject under `strategy` until `budget` stops them, the
// strategy is exhausted or `keep` ends them; `proves`: the strategy can say it is exhausted
// (strategy_proves, and not a replay). After each execution (counted, then seen by the policy),
// `progress(exploration so far)`. `from`: what the same exploration counted before, in another
// process whose strategy was handed over to this one (Strategy::hand_over): it goes on at
// execution from.executions and counts on from there.
template <ExecutionRunner Runner, class Keep, class Progress>
Exploration<Keep> explore_executions(Runner& runner, Keep keep, Strategy& strategy,
                                     const Budget& budget, bool proves, Progress&& progress,
                                     const Tally& from = {}) {
  Exploration<Keep> out(std::move(keep));
  static_cast<Tally&>(out) = from;
  for (std::uint64_t i = from.executions;; ++i) {
    if (const auto stop = budget.before(i, strategy, proves)) {
      out.stop = *stop;
      break;
    }
    auto record = runner.run(strategy, i);
    if (!record) {
      out.stop = StopReason::kExhausted;
      break;
    }
    static_assert(KeepPolicy<Keep, typename decltype(record)::value_type>);
    out.add(runner.steps(*record), runner.fingerprint(*record));
    const bool go_on = out.kept.keep(i, *record);
    out.seconds = budget.elapsed();
    progress(std::as_const(out));
    if (!go_on) break;
  }
  out.seconds = budget.elapsed();
  return out;
}

}  // namespace racelab::sched
