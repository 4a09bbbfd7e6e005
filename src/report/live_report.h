#pragma once
// What a live search (racelab live torch | live python, src/live/search.h) writes, beside the
// model's writers (report.h): report.json (kLiveReportFormat and its version, util/document.h),
// trace.txt (time, decision, thread, operation) and the failing execution's schedule-<kind>.json,
// a schedule file like the model's (docs/schedules.md) whose header names the live subject.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "live/search.h"

namespace racelab::report {

// The Python stack of thread `name` in a stacks.txt, innermost frames last ('' if absent).
std::string thread_stack(const std::filesystem::path& stacks, const std::string& name);
std::string lost_thread(const sched::Finding& f);  // "racelab lost control of NAME: ..." -> NAME
std::string trace_text(const live::Result& r);     // trace.txt: time, decision, thread, operation

// Writes the schedule of execution `execution` (result `r`) as schedule-<kind>.json; its path.
std::string write_schedule(const live::SearchOptions& a, const live::JobInfo& info,
                           const live::Result& r, std::uint64_t execution,
                           const std::string& strategy_desc);
// Writes report.json, trace.txt and, for a failure, the schedule; returns the schedule's path.
std::string write_outputs(const live::SearchOptions& a, const live::JobInfo& info,
                          const live::Outcome& o, const std::string& strategy_desc);

}  // namespace racelab::report
