#pragma once
// One model scenario's run (racelab explore, a suite's scenario, a merged shard): the scenario, its
// search's options and result, and what its [expect] check found; the words that describe it.
// run/ makes it (run_scenario), report/ writes it.
#include <optional>
#include <string>
#include <vector>

#include "model/scenario.h"
#include "sched/explore.h"
#include "sched/verdict.h"

namespace racelab::results {

// The verdict on one scenario is results::judge's (sched/verdict.h: the one rule), from the
// scenario's [expect] and what its search did. A shard (--shard K/N) ran a part of the search and
// judges only what a part can settle: a `must_not` kind it found fails (the whole finds it too), a
// `must` kind it found holds; a `must` kind it did not find, or an absence it claims, is pending:
// racelab merge judges the whole.
struct ScenarioRun {
  model::Scenario scenario;
  sched::ExploreOptions options;
  sched::ExploreResult result;
  std::vector<std::string> missing;     // in expect.must, never found
  std::vector<std::string> unexpected;  // in expect.must_not, found
  bool holds() const {
    return missing.empty() && unexpected.empty() && result.determinism_failures.empty();
  }
  bool has_expectations() const { return !scenario.must.empty() || !scenario.must_not.empty(); }
  // The strategy proves absence when it covers its space (dfs, exhaustive within its bound; dpor,
  // every interleaving class).
  bool proves() const { return sched::strategy_proves(options.strategy.kind); }
  // A shard of a search (--shard K/N with N > 1): its coverage is partial, never exhaustive.
  bool shard() const { return options.partition.shards > 1; }
  // The search covered its whole space: exhausted, and not a shard of it.
  bool exhaustive() const { return result.exhausted() && !shard(); }
  // "shard 1/4"; empty when not a shard.
  std::string shard_label() const;
  // A shard's part of the search: "subtrees 1, 5, …, 229 of 232" (dfs, dpor), "executions 1, 5,
  // 9, … of the budget" (random, pct).
  std::string shard_part() const;
  // results::judge on this run (computed each time: merge changes `result.stop` after the run).
  results::Verdict judged() const;
  results::Outcome verdict() const { return judged().outcome; }
  // One line: how much of the space the run covered ("exhaustive within the bound: N executions",
  // "cut short by the execution cap after N executions: not a proof", "sampled N executions
  // (pct), not a proof").
  std::string coverage() const;
  // The same in a few words for a suite's one line per scenario: "proven (dpor, exhaustive, 24
  // executions)", "proven within the bound (dfs, max_preemptions=2, exhaustive, 1255196
  // executions)", "96613 executions, cut short by the time limit", "2000 executions sampled, not
  // a proof".
  std::string coverage_brief() const;
  // "interleaving classes: 350 seen (per-resource hand-off order); ..." with, for a sampling
  // strategy, the Good-Turing chance that the next execution shows a new one and Chao1's estimate
  // of how many there are; empty when the result has no interleaving coverage (explore.h).
  std::string interleavings() const;
  // One line, empty for a pass: why the verdict is fail, inconclusive or pending.
  std::string verdict_reason() const { return judged().reason; }
  // The failure kinds (sched::kinds::is_failure) found, in report order.
  std::vector<std::string> failures() const;
  // Virtual time of a reference execution (no preemptions, lowest thread first): what the warmup
  // costs before the drafters start, and when the last thread finishes.
  double warmup_seconds = 0;
  double makespan_seconds = 0;
};

// The exit code of `racelab explore` for a run (docs/cli.md): 1 when a failure kind was found, or
// when the scenario has expectations whose verdict is not pass; 0 otherwise (evidence kinds alone
// never make it 1).
int explore_exit_code(const ScenarioRun& run);

}  // namespace racelab::results
