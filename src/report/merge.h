#pragma once
// racelab merge: shard outputs of one exploration (or one suite) combined into what a single run
// would have written. Shards that do not belong together are refused with the reason.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/suite.h"

namespace racelab::report {

// The shards' --out directories of one exploration (each holds report.json and schedules/).
// Every finding is re-executed from its shard's schedule, so the run carries full executions.
model::ScenarioRun merge_exploration(const std::vector<std::string>& dirs);

// The summary.json of the first of the shards' --out directories of one suite, after checking that
// every shard's is one ("format": "racelab-summary", or none) of a version this racelab reads.
// Throws InputError on invalid JSON, another format or a newer version.
nlohmann::json read_suite_summaries(const std::vector<std::string>& dirs);

}  // namespace racelab::report
