#pragma once
// Machine-readable outputs of explore and suite: report.json, one schedule file per finding kind,
// summary.json and JUnit XML. docs/reports.md documents every field.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/live_case.h"
#include "model/suite.h"
#include "sched/schedule.h"

namespace racelab::report {

// The schedule file of one finding of a scenario run.
sched::Schedule finding_schedule(const model::ScenarioRun& run, const sched::FoundKind& found);

// A finding's message without a leading "<kind>: " (the kind is printed beside it already).
std::string message_text(const sched::Finding& f);

// Findings in report order: sched::kinds::rank (deadlock first), then name, then as given.
std::vector<const sched::Finding*> ordered(const std::vector<sched::Finding>& findings);

// JSON numbers for people: seconds and virtual times rounded to 6 significant decimals (1 us),
// so that 49.29800000000001 is written 49.298.
double round_seconds(double s);

// The command that replays a schedule file.
std::string replay_command(const std::string& schedule_path);

// report.json and summary.json name their format and its version in their first keys
// ("format": "racelab-report", "version": 1); racelab merge refuses another format or a newer
// version, and reads files without the keys (written before racelab had them) as version 1.
inline constexpr const char* kReportFormat = "racelab-report";
inline constexpr int kReportVersion = 1;
inline constexpr const char* kSummaryFormat = "racelab-summary";
inline constexpr int kSummaryVersion = 1;

// A report's or summary's file text: "format" and "version" first, then the other keys in order
// (indent 2, a final newline).
std::string document_text(const nlohmann::json& doc);

// Throws InputError, one line naming `path`, when `doc` is not of `format` (`what` says what that
// is: "the report.json of racelab explore --out") or is of a version newer than `version`; a
// document without "format" and "version" passes (an older racelab's).
void check_format(const nlohmann::json& doc, const std::string& path, const char* format,
                  int version, const std::string& what);

// Writes <dir>/schedules/<scenario>.<kind>.json for every finding, then <dir>/report.json, each
// atomically. Returns the report. An empty dir writes nothing and only builds the report.
nlohmann::json write_explore_outputs(const model::ScenarioRun& run, const std::string& dir);

// JUnit XML: one testsuite "racelab", one testcase per scenario; a failure names the missing and
// unexpected finding kinds.
// Live cases ([live]) are test cases too: a skip is <skipped/>, anything but a pass a <failure>.
std::string junit_xml(const std::vector<model::ScenarioRun>& runs, double seconds,
                      const std::vector<model::LiveCaseRun>& live = {});
// summary.json's entry for a live case: name, path, "live": true, verdict, reason, kinds (kind ->
// executions), executions, the command and its report.
nlohmann::json live_summary_entry(const model::LiveCaseRun& run);

std::string xml_escape(const std::string& text);

// summary.json (racelab suite, racelab merge): one entry per scenario, then the document.
nlohmann::json suite_summary_entry(const model::ScenarioRun& run, const nlohmann::json& report,
                                   const std::string& dir);
// Counts passed, failed and inconclusive from the entries' verdicts. Write it with
// document_text (its "format" and "version" first).
nlohmann::json suite_summary(const std::vector<nlohmann::json>& entries, bool interrupted,
                             double seconds, const sched::Partition& partition);

}  // namespace racelab::report
