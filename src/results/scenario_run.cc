#include "results/scenario_run.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "sched/strategies/strategies.h"
#include "util/errors.h"

namespace racelab::results {

std::string ScenarioRun::shard_label() const {
  if (!shard()) return "";
  return fmt::format("shard {}/{}", options.partition.shard, options.partition.shards);
}

std::string ScenarioRun::shard_part() const {
  const std::uint64_t k = options.partition.shard, n = options.partition.shards;
  if (result.subtree_count == 0)
    return fmt::format("executions {}, {}, {}, … of {}", k, k + n, k + 2 * n, options.iterations);
  const std::uint64_t m = result.subtree_count;
  if (k >= m) return fmt::format("none of {} subtrees", m);
  const std::uint64_t last = k + (m - 1 - k) / n * n;
  if (last == k) return fmt::format("subtree {} of {}", k, m);
  if (last == k + n) return fmt::format("subtrees {}, {} of {}", k, last, m);
  return fmt::format("subtrees {}, {}, …, {} of {}", k, k + n, last, m);
}

results::Verdict ScenarioRun::judged() const {
  std::vector<std::string> found;
  for (const auto& f : result.found) found.push_back(f.finding.kind);
  const sched::StrategyParams& p = options.strategy;
  // Only a bounded search gets smaller with a lower bound (the row says which).
  const bool has_bound = sched::bound_shrinks(p);
  return results::judge({.must = scenario.must, .must_not = scenario.must_not},
                        {.strategy = sched::strategy_name(p.kind),
                         .stop = result.stop,
                         .executions = result.executions,
                         .cap = options.iterations,
                         .proves = proves(),
                         .bounded = sched::strategy_info(p.kind).bounded,
                         .found = std::move(found),
                         .not_deterministic = result.determinism_failures,
                         .shard = shard_label(),
                         .shard_part = shard() ? shard_part() : ""},
                        std::nullopt, results::model_wording(options.iterations, has_bound));
}

std::string ScenarioRun::coverage() const {
  if (shard()) {
    return fmt::format("partial ({}; {}): {} executions ({}){}; racelab merge judges the whole",
                       shard_part(), shard_label(), result.executions, result.strategy,
                       result.stop == sched::StopReason::kTimeLimit ||
                               result.stop == sched::StopReason::kInterrupted
                           ? fmt::format(", cut short by {}", sched::stop_reason_words(result.stop))
                           : "");
  }
  return sched::coverage_sentence({.strategy = result.strategy,
                                   .executions = result.executions,
                                   .cap = options.iterations,
                                   .stop = result.stop,
                                   .proves = proves(),
                                   .bounded = sched::strategy_info(options.strategy.kind).bounded,
                                   .classes = result.classes,
                                   .states = result.states,
                                   .misses_classes = sched::misses_classes(options.strategy)});
}

std::string ScenarioRun::interleavings() const {
  const auto interleavings = result.interleavings();
  if (!interleavings) return "";
  return sched::coverage_line(*interleavings, !proves());
}

std::string ScenarioRun::coverage_brief() const {
  const std::uint64_t n = result.executions;
  if (shard()) return fmt::format("partial ({}), {} executions", shard_part(), n);
  if (!proves()) return fmt::format("{} executions sampled, not a proof", n);
  if (!result.exhausted())
    return fmt::format("{} executions, cut short by {}", n, sched::stop_reason_words(result.stop));
  // What the exhausted search proves, in its strategy's words (its row's proof_brief).
  return sched::proof_brief(options.strategy, n);
}

std::vector<std::string> ScenarioRun::failures() const {
  std::vector<std::string> out;
  for (const auto& f : result.found) {
    if (sched::kinds::is_failure(f.finding.kind)) out.push_back(f.finding.kind);
  }
  return out;
}

int explore_exit_code(const ScenarioRun& run) {
  if (!run.failures().empty()) return kExitFound;
  const results::Outcome v = run.verdict();
  if (run.has_expectations() && v != results::Outcome::kPass && v != results::Outcome::kPending)
    return kExitFound;
  return kExitOk;
}

}  // namespace racelab::results
