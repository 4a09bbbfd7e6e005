#pragma once
// Machine-readable outputs of explore and suite: report.json, one schedule file per finding kind,
// summary.json and JUnit XML. docs/reports.md documents every field.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/suite.h"
#include "sched/schedule.h"

namespace racelab::report {

// The schedule file of one finding of a scenario run.
sched::Schedule finding_schedule(const model::ScenarioRun& run, const sched::FoundKind& found);

// The command that replays a schedule file.
std::string replay_command(const std::string& schedule_path);

// Writes <dir>/schedules/<scenario>.<kind>.json for every finding, then <dir>/report.json, each
// atomically. Returns the report. An empty dir writes nothing and only builds the report.
nlohmann::json write_explore_outputs(const model::ScenarioRun& run, const std::string& dir);

// JUnit XML: one testsuite "racelab", one testcase per scenario; a failure names the missing and
// unexpected finding kinds.
std::string junit_xml(const std::vector<model::ScenarioRun>& runs, double seconds);

std::string xml_escape(const std::string& text);

// summary.json (racelab suite, racelab merge): one entry per scenario, then the document.
nlohmann::json suite_summary_entry(const model::ScenarioRun& run, const nlohmann::json& report,
                                   const std::string& dir);
nlohmann::json suite_summary(const std::vector<nlohmann::json>& entries, int failed,
                             bool interrupted, double seconds, const sched::Partition& partition);

}  // namespace racelab::report
