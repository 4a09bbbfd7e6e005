#pragma once
// Versioned documents: the JSON files racelab writes for a later racelab (merge, suite, check) to
// read name their format and its version in their first keys, as rr's trace carries the version
// it is checked against on load. The formats and versions are here, in one place, so that every
// writer and reader uses the same constant whatever its layer: the model's report writers
// (report/report.cc), racelab merge, the live report writers (report/live_report.cc, racelab live
// python --uncontrolled, the crash handler of live/python/crash.cc), the live cases of racelab
// suite (model/live_case.cc), which read a live report back, the allocator's files
// (alloc/outputs.cc: alloc-report.json, which racelab check reads back, replay.json and
// whatif.json) and racelab check's check.json. A
// reader refuses another format or a newer version (check_format); bump a version when a reader
// could misread the new files. Schedule files have a stricter reader of their own
// (sched/schedule.h).
#include <nlohmann/json.hpp>
#include <string>

namespace racelab {

// report.json and summary.json of racelab explore | suite | merge ("format": "racelab-report",
// "version": 1). Files without the keys (written before racelab had them) read as version 1.
inline constexpr const char* kReportFormat = "racelab-report";
inline constexpr int kReportVersion = 1;
inline constexpr const char* kSummaryFormat = "racelab-summary";
inline constexpr int kSummaryVersion = 1;
// report.json of racelab replay --out (a model schedule replayed): what the page shows.
inline constexpr const char* kReplayReportFormat = "racelab-replay-report";
inline constexpr int kReplayReportVersion = 1;
// report.json of racelab live torch | live python, searched, uncontrolled or crashed.
inline constexpr const char* kLiveReportFormat = "racelab-live-report";
inline constexpr int kLiveReportVersion = 1;
// alloc-report.json of racelab alloc report --out, and replay.json of racelab alloc replay --out.
inline constexpr const char* kAllocReportFormat = "racelab-alloc-report";
inline constexpr int kAllocReportVersion = 2;
inline constexpr const char* kAllocReplayFormat = "racelab-alloc-replay";
inline constexpr int kAllocReplayVersion = 1;
// whatif.json of racelab alloc whatif --out: "devices", each device's settings (a bare array of
// them before it had a version).
inline constexpr const char* kAllocWhatifFormat = "racelab-alloc-whatif";
inline constexpr int kAllocWhatifVersion = 1;
// check.json of racelab check --out.
inline constexpr const char* kCheckFormat = "racelab-check";
inline constexpr int kCheckVersion = 1;

// A document's file text: "format" and "version" first, then the other keys in order (indent 2
// unless `indent` says otherwise, a final newline): a json's in alphabetical order (the model's
// report.json and summary.json), an ordered_json's in the order they were set (the live
// report.json, check.json, the allocator's). The allocator's alloc-report.json and whatif.json,
// long lists of numbers, are indented by 1.
std::string document_text(const nlohmann::json& doc, int indent = 2);
std::string document_text(const nlohmann::ordered_json& doc, int indent = 2);

// Throws InputError, one line naming `path`, when `doc` is not of `format` (`what` says what that
// is: "the report.json of racelab explore --out") or is of a version newer than `version`; a
// document without "format" and "version" passes (an older racelab's).
void check_format(const nlohmann::json& doc, const std::string& path, const char* format,
                  int version, const std::string& what);

}  // namespace racelab
