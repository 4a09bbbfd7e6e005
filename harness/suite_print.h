#pragma once
// How racelab suite, a shard of it and racelab merge print a suite, the same lines for the same
// result: one line per scenario (its verdict word, what it found and covered, why anything but
// a pass is not one), then the files written and the totals (results::SuiteTotals::line).
#include <nlohmann/json.hpp>
#include <string>

#include "results/scenario_run.h"
#include "run/live_case.h"
#include "run/suite.h"

namespace racelab::cli {

void print_suite_scenario(const results::ScenarioRun& run, const report::ExploreOutput& written);
void print_suite_live_case(const results::LiveCaseRun& lr);
// The "wrote ..." line and the totals line (green when the suite passes, red otherwise).
void print_suite_end(const results::SuiteTotals& totals, const std::string& out_dir,
                     const std::string& junit);

}  // namespace racelab::cli
