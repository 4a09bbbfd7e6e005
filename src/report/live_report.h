#pragma once
// What a live search (racelab live torch | live python, src/live/search.h) writes, beside the
// model's writers (report.h): report.json (kLiveReportFormat and its version, util/document.h),
// trace.txt (time, decision, thread, operation) and the failing execution's schedule-<kind>.json,
// a schedule file like the model's (docs/schedules.md) whose header names the live subject.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "live/search.h"
#include "report/schedule_paths.h"
#include "sched/schedule.h"
#include "sched/strategy.h"

namespace racelab::report {

// What a live Python run does not check, said with every clean verdict (the terminal's line) and
// in its report.json (`not_checked`): racelab orders threads only where they synchronise (locks,
// queues, events, conditions, joins, the table's points), so Python variables they share without
// synchronisation are never interleaved at their accesses (docs/live.md, "What is not checked").
inline constexpr const char* kPythonNotChecked =
    "Python variables shared without synchronisation (an unlocked counter, list or attribute) are "
    "not checked; --dict MODULE.ATTR makes a dict's lookups and inserts scheduling points, and "
    "--point MODULE.FUNC a function's entry (docs/live.md)";

// What a finished live proof (the live prover, sched::live_prover()) proves, said with its clean
// verdict (the terminal) and in report.json (`proof_covers`): every order of the operations racelab
// sees that can differ (docs/live.md, "Proofs"), and nothing finer.
inline constexpr const char* kLiveProofCovers =
    "dpor's proof covers the operations racelab sees (locks, conditions, events, semaphores, "
    "barriers, queues, joins, interposed dicts, points as their table declares them, and what "
    "foreign threads do on them), not the order of accesses to Python state between them";
// The same for the LibTorch workload (racelab live torch), whose operations are its own.
inline constexpr const char* kLiveTorchProofCovers =
    "dpor's proof covers the operations racelab sees (the workload's mutexes, shared variables, "
    "points and joins, and what foreign threads do on them), not the order of other memory "
    "accesses between them";
inline const char* live_proof_covers(std::string_view subject) {
  return subject == sched::kLivePythonSubject ? kLiveProofCovers : kLiveTorchProofCovers;
}

// The Python stack of thread `name` in a stacks.txt, innermost frames last ('' if absent).
std::string thread_stack(const std::filesystem::path& stacks, const std::string& name);
std::string lost_thread(const sched::Finding& f);  // "racelab lost control of NAME: ..." -> NAME
std::string trace_text(const live::Result& r);     // trace.txt: time, decision, thread, operation

// Writes the schedule of execution `execution` (result `r`) as schedule-<kind>.json; its path.
std::string write_schedule(const live::SearchOptions& a, const live::JobInfo& info,
                           const live::Result& r, std::uint64_t execution,
                           const std::string& strategy_desc);
// --all-findings: writes the schedule of each kind this process found first (Outcome's
// kept.found) and returns them, the earlier processes' (SearchOptions::carried) first.
std::vector<live::Found> write_found(const live::SearchOptions& a, const live::JobInfo& info,
                                     const live::Outcome& o, const std::string& strategy_desc);
// The schedule files a live run wrote (schedule_path's live layout), "" where none.
struct LiveSchedules {
  std::string failure;  // the kept failure's (report.json "schedule")
  std::string other;    // the other failure's, searched past (report.json "other_failure")
};
// Writes report.json, trace.txt and, for a failure, the schedules; returns their paths.
// `classes`: dpor's interleaving classes and redundant executions (report.json "dpor").
// `found`: --all-findings's kinds (write_found), each execution's findings in "findings" and
// the kinds in "kinds_found".
LiveSchedules write_outputs(const live::SearchOptions& a, const live::JobInfo& info,
                            const live::Outcome& o, const std::string& strategy_desc,
                            std::optional<sched::Strategy::Classes> classes = std::nullopt,
                            const std::vector<live::Found>& found = {});

// One plain run of a script (racelab live python --uncontrolled): real threads, nothing
// interposed, the time limit its only bound.
struct UncontrolledRun {
  std::string subject = sched::kLivePythonSubject;
  sched::SubjectConfig parameters;  // the job, as a live search's report names it
  double seconds = 0;
  bool finished = false;  // false: still running at the time limit, a hang
  double time_limit = 0;
  std::vector<std::pair<std::string, std::string>> failures;  // (kind, message) the script raised
  std::string alloc;  // the allocator capture's directory, or ""
};
// Writes `out`/report.json for it (the live report format, "uncontrolled": true); returns its
// findings, in order: the failures, then the hang of a run still going at the time limit (whose
// every thread's Python stack the caller writes to `out`/stacks.txt).
std::vector<std::pair<std::string, std::string>> write_uncontrolled_report(
    const std::filesystem::path& out, const UncontrolledRun& run);

}  // namespace racelab::report
