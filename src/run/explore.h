#pragma once
// racelab explore's use case, and a suite's model scenario: one scenario under its [explore] (or
// the command line's overrides), its [expect] checked; the result (results/scenario_run.h) is what
// report/ writes.
#include "model/scenario.h"
#include "results/scenario_run.h"
#include "sched/explore.h"

namespace racelab::run {

// Options from the scenario's [explore] table; callers then apply command-line overrides.
sched::ExploreOptions explore_options(const model::Scenario& s);

results::ScenarioRun run_scenario(const model::Scenario& s, const sched::ExploreOptions& options);

// Puts run.result.found in report order (sched::kinds::before: rank, then name, the same order on
// every run) and fills run.missing and run.unexpected from the scenario's [expect].
void judge(results::ScenarioRun& run);

}  // namespace racelab::run
