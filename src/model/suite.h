#pragma once
// A suite's scenario files: their discovery and loading, and the scenario a schedule was recorded
// against. Running one is run/explore.h's.
#include <optional>
#include <string>
#include <vector>

#include "model/scenario.h"
#include "sched/explore.h"
#include "sched/schedule.h"

namespace racelab::model {

// Expands files and directories (recursively, *.toml, sorted) into scenario paths. Throws
// InputError for a missing path or a directory without scenarios.
std::vector<std::string> collect_scenario_files(const std::vector<std::string>& paths);

// Loads every file; throws InputError on the first bad one or on a duplicate name.
std::vector<Scenario> load_suite(const std::vector<std::string>& files);

}  // namespace racelab::model

namespace racelab::model {

// The scenario a schedule was recorded against: `override_path` when given, else the path the
// schedule names; run under `torch` (apply_torch) when given, else under the version it was
// recorded with (a schedule of `explore --torch V` is recognised by its hash). Throws InputError
// when it cannot be read, or when its content changed since recording and `allow_other` is
// false.
Scenario scenario_for_schedule(const sched::Schedule& schedule, const std::string& schedule_path,
                               const std::string& override_path, bool allow_other = false,
                               const std::string& torch = "");

}  // namespace racelab::model
