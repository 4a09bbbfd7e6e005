#pragma once
// Running scenarios: one scenario under its [explore] (or overrides), its [expect] checked; and the
// discovery of scenario files for a suite.
#include <string>
#include <vector>

#include "model/scenario.h"
#include "sched/explore.h"

namespace racelab::model {

struct ScenarioRun {
  Scenario scenario;
  sched::ExploreOptions options;
  sched::ExploreResult result;
  std::vector<std::string> missing;     // in expect.must, never found
  std::vector<std::string> unexpected;  // in expect.must_not, found
  bool holds() const {
    return missing.empty() && unexpected.empty() && result.determinism_failures.empty();
  }
  // Virtual time of a reference execution (no preemptions, lowest thread first): what the warmup
  // costs before the drafters start, and when the last thread finishes.
  double warmup_seconds = 0;
  double makespan_seconds = 0;
};

// Options from the scenario's [explore] table; callers then apply command-line overrides.
sched::ExploreOptions explore_options(const Scenario& s);

ScenarioRun run_scenario(const Scenario& s, const sched::ExploreOptions& options);

// Expands files and directories (recursively, *.toml, sorted) into scenario paths. Throws
// InputError for a missing path or a directory without scenarios.
std::vector<std::string> collect_scenario_files(const std::vector<std::string>& paths);

// Loads every file; throws InputError on the first bad one or on a duplicate name.
std::vector<Scenario> load_suite(const std::vector<std::string>& files);

}  // namespace racelab::model

namespace racelab::sched {
struct Schedule;
}

namespace racelab::model {

// The scenario a schedule was recorded against: `override_path` when given, else the path the
// schedule names. Throws InputError when it cannot be read or its content changed since recording.
Scenario scenario_for_schedule(const sched::Schedule& schedule, const std::string& schedule_path,
                               const std::string& override_path);

}  // namespace racelab::model
