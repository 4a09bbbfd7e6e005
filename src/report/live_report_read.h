#pragma once
// The report.json of our own `racelab live python` children, read back into types (racelab
// suite's live cases and racelab check run racelab as a child process: a live run may leave
// threads stuck in real calls and must end its own process). One reader, so that no use case
// picks keys out of the JSON itself; the writer is live_report.h's write_outputs (a search) and
// write_uncontrolled_report (an uncontrolled run).
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sched/finding.h"
#include "sched/loop.h"

namespace racelab::report {

// A finding as report.json gives it (the first ones: the kept failure's, in the registry's
// order; an uncontrolled run's failures, then its hang).
struct LiveReportFinding {
  std::string kind;  // "" where the report gave none
  std::string message;
  std::uint64_t execution = 0;
  std::vector<sched::StackFrame> stack;  // a Python exception's traceback, outermost first
};

struct LiveReportSummary {
  std::uint64_t executions = 0;
  // How the search stopped; none for an uncontrolled run (which searches nothing).
  std::optional<sched::StopReason> stopped_by;
  bool exhausted = false;  // the strategy covered its space
  bool proves = false;     // the strategy proves (dpor, dfs): its coverage is counted
  // The process died of a fatal signal (a C extension crashed): the crash handler wrote this
  // report (live/python/crash.cc), its one finding of kind "crash".
  bool crashed = false;
  std::map<std::string, std::uint64_t> kinds_seen;  // kind -> executions that saw it
  std::vector<LiveReportFinding> findings;
  std::string schedule;          // the kept failure's schedule file, "" where none
  std::string outside_verified;  // the torch or Python outside the table's range ("" inside)
  std::string proof_covers;      // what a finished proof covers ("" for a sampling search)
  std::optional<std::uint64_t> classes_seen;  // the interleaving classes, where counted
};

// The report.json at `path`: nullopt when there is none or it is not JSON (the child died before
// it wrote one: the caller says so with the child's log); InputError, one line, when it is of
// another format or of a newer version than this racelab reads (racelab suite then exits 2, as
// racelab merge does for a report.json it cannot read).
std::optional<LiveReportSummary> read_live_report(const std::filesystem::path& path);

}  // namespace racelab::report
