#pragma once
// Machine-readable outputs of explore and suite: report.json, one schedule file per finding kind,
// summary.json and JUnit XML. docs/reports.md documents every field.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "report/junit.h"
#include "report/schedule_paths.h"
#include "results/live_case_run.h"
#include "results/scenario_run.h"
#include "sched/schedule.h"
#include "util/document.h"

namespace racelab::report {

// The schedule file of one finding of a scenario run.
sched::Schedule finding_schedule(const results::ScenarioRun& run, const sched::FoundKind& found);

// A finding's message without a leading "<kind>: " (the kind is printed beside it already).
std::string message_text(const sched::Finding& f);
std::string message_text(const std::string& kind, const std::string& message);  // a report's

// Findings in report order: sched::kinds::before (rank, deadlock first, then name), then as given.
std::vector<const sched::Finding*> ordered(const std::vector<sched::Finding>& findings);

// A finding as the model's and the live report.json write it: "kind", "message", then `where`,
// then "details" and "cycle". `where` locates it, and differs on purpose: a model finding is the
// first execution of its kind in a search, shrunk ("execution", "preemptions",
// "preemptions_before_shrink", "steps", "virtual_time_s"), a live one a decision of a real run
// ("decision"; the writer adds its "execution").
nlohmann::ordered_json finding_json(const sched::Finding& f, const nlohmann::ordered_json& where);

// JSON numbers for people: seconds and virtual times rounded to 6 significant decimals (1 us),
// so that 49.29800000000001 is written 49.298.
double round_seconds(double s);

// report.json and summary.json name their format and its version in their first keys
// (kReportFormat, kSummaryFormat: util/document.h, beside the live report's); racelab merge
// refuses another format or a newer version (check_format). Write them with document_text.

// What an explore wrote, typed, so that no caller reads back the report it just wrote: the report,
// and for each finding (in run.result.found's order, the report's) its kind, its schedule file and
// the command that replays it ("" where nothing was written).
struct FoundOutput {
  std::string kind, schedule, replay;
};
struct ExploreOutput {
  nlohmann::json report;
  std::vector<FoundOutput> found;
  // The report's interleavings.classes_seen and .unseen_probability, where it has them.
  std::optional<std::uint64_t> classes_seen;
  std::optional<double> unseen_probability;
};
// Writes <dir>/schedules/<scenario>.<kind>.json for every finding, then <dir>/report.json, each
// atomically. Returns what it wrote. An empty dir writes nothing and only builds the report.
ExploreOutput write_explore_outputs(const results::ScenarioRun& run, const std::string& dir);

// summary.json's entry for a live case: name, path, "live": true, verdict, reason, kinds (kind ->
// executions), executions, the command and its report.
nlohmann::json live_summary_entry(const results::LiveCaseRun& run);
// The live case of a summary.json entry, as racelab merge carries it from shard 0 (its scenario
// read from its path where it still exists, else named only).
results::LiveCaseRun live_case_from_summary(const nlohmann::json& entry);

// summary.json (racelab suite, racelab merge): one entry per scenario, then the document.
nlohmann::json suite_summary_entry(const results::ScenarioRun& run, const ExploreOutput& written,
                                   const std::string& dir);
// Counts passed, failed and inconclusive from the entries' verdicts. Write it with
// document_text (util/document.h: its "format" and "version" first).
nlohmann::json suite_summary(const std::vector<nlohmann::json>& entries, bool interrupted,
                             double seconds, const sched::Partition& partition);

}  // namespace racelab::report
