#pragma once
// racelab merge: shard outputs of one exploration (or one suite) combined into what a single run
// would have written. Shards that do not belong together are refused with the reason.
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "results/scenario_run.h"
#include "run/live_case.h"
#include "run/suite.h"

namespace racelab::run {

// The shards' --out directories of one exploration (each holds report.json and schedules/).
// Every finding is re-executed from its shard's schedule, so the run carries full executions.
results::ScenarioRun merge_exploration(const std::vector<std::string>& dirs);

// racelab merge DIR...: the shards' --out directories (of one exploration, or of one suite),
// checked, combined and written under `out` (report.json, schedules, summary.json for a suite,
// report.html; JUnit XML to `junit` unless empty) as one unsharded run would have written them.
// `on_run` sees each merged model scenario with what was written for it (its report.json and
// schedules), `on_live` each live case (live cases ran whole on shard 0 and are kept as judged
// there), for the terminal, which prints them as racelab suite does. InputError for directories
// that do not belong together.
struct MergePrinter {
  std::function<void(const results::ScenarioRun&, const report::ExploreOutput&)> on_run;
  std::function<void(const results::LiveCaseRun&)> on_live;
};
struct MergeResult {
  bool suite = false;  // the shards of a suite (else of one exploration)
  SuiteTotals totals;  // a suite's, as the unsharded suite counts them
  // A suite's 0 when every scenario passed (or was skipped), else 1; an exploration's as
  // `racelab explore` would exit.
  int exit_code = 0;
};
MergeResult merge_shards(const std::vector<std::string>& dirs, const std::string& out,
                         const std::string& junit, const MergePrinter& print);

}  // namespace racelab::run
