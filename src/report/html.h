#pragma once
// report.html for explore and suite: a summary table, and for every finding the interleaving as
// thread lanes over steps, the wait-for cycle and the replay command. docs/reports.md.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/suite.h"

namespace racelab::report {

struct HtmlScenario {
  const model::ScenarioRun* run;
  nlohmann::json report;  // what write_explore_outputs returned (schedule paths, replay commands)
};

std::string explore_html(const std::vector<HtmlScenario>& scenarios, const std::string& title,
                         double seconds);

// report.html for one replayed schedule: its findings (cycle, details) and the interleaving.
std::string replay_html(const std::string& schedule_path, const sched::ExecutionResult& result,
                        const std::string& expected_kind, bool reproduced);

// The lanes of one execution (an <svg class="lanes">).
std::string lanes_svg(const sched::Execution& exec, const sched::Finding* finding);

// The wait-for cycle of a deadlock (an <svg class="cycle">); empty when there is no cycle.
std::string cycle_svg(const sched::Finding& finding);

}  // namespace racelab::report
