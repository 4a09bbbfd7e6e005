#pragma once
// The registry of finding kinds: every kind racelab reports, who finds it, whether it is a failure
// or evidence, and the shape of its message. The model (src/model), the live runtime (src/live),
// the scenario parser ([expect] must / must_not), the command line (exit codes) and the reports
// (order, colour) all read this one table; a kind that is not here does not exist.
//
// Failure or evidence. A *failure* is something that goes wrong in the user's program (it hangs,
// it crashes, it races): finding one makes a run exit 1. *Evidence* is something worth knowing
// that is not a failure on its own (a graph compiled twice, a compile after the warmup, a fall
// back to the eager path): it is reported and may be asked for in [expect], but it never changes
// an exit code by itself. Reports list findings by `rank` (failures first, the worst first).
//
// Kinds are strings in files (report.json, schedules, scenarios), so a name must never change.
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace racelab::sched::kinds {

// Found by the scheduler's own checkers, for any subject (model or live).
inline constexpr const char* kDeadlock = "deadlock";
inline constexpr const char* kDataRace = "data_race";
inline constexpr const char* kAssertion = "assertion";
inline constexpr const char* kLivelock = "livelock";
inline constexpr const char* kException = "exception";
// Found by the live runtime only: no progress for the hang timeout and no wait-for cycle to name.
inline constexpr const char* kHang = "hang";
// Found by the live runtime only: a controlled thread ran past the hang timeout without reaching
// a scheduling point. racelab's blind spot (a call it does not control), not the program's bug.
inline constexpr const char* kLostControl = "lost_control";
// Found by the live runtime only: a decision met other enabled threads than the same schedule
// prefix met before, because something racelab cannot see acted at another moment. racelab's
// blind spot, not the program's bug: the search stops, inconclusive.
inline constexpr const char* kNondeterministic = "nondeterministic";
// Found by live runs only: the process received a fatal signal (a C extension crashed, abort()).
inline constexpr const char* kCrash = "crash";
// Found by the pipeline model (rules M2, M4) and, where they can observe them, by live runs.
inline constexpr const char* kFxTraceError = "fx_trace_error";
inline constexpr const char* kOom = "oom";
inline constexpr const char* kDuplicateCompile = "duplicate_compile";
inline constexpr const char* kCompileAfterWarmup = "compile_after_warmup";
inline constexpr const char* kRecompileLimit = "recompile_limit";

// kInconclusive: racelab could not finish observing the run (it lost control of a thread); such a
// run is never a pass and never satisfies an expectation, and the command exits 3.
enum class Severity { kFailure, kEvidence, kInconclusive };

// Who can report a kind (a bit set).
enum Finder : unsigned {
  kByScheduler = 1u << 0,   // the engine's checkers, on model and live subjects alike
  kByModel = 1u << 1,       // the pipeline model's rules
  kByLiveTorch = 1u << 2,   // the LibTorch workload (racelab live torch)
  kByLivePython = 1u << 3,  // the embedded Python bridge (racelab live python)
  kByLive = kByLiveTorch | kByLivePython,
};

struct KindInfo {
  const char* name;
  Severity severity;
  unsigned found_by;    // Finder bits
  int rank;             // report order: lower first
  const char* meaning;  // one line, for docs and `racelab explain`-style listings
  const char* message;  // the shape of its message, for docs
};

// Every kind, in report order.
std::span<const KindInfo> all();
// The entry for `name`, or null.
const KindInfo* find(std::string_view name);
// True for failures and for kinds not in the registry (an unknown kind is never silently a pass).
bool is_failure(std::string_view name);
// True for kinds that say racelab could not observe the run to its end (lost_control).
bool is_inconclusive(std::string_view name);
// Report order of a kind; unknown kinds sort after every known one.
int rank(std::string_view name);
// Report order of two kinds: by rank, then by name, so that kinds of equal rank (and those the
// registry does not know) read in the same order on every run. The comparator of every sort and
// choice by severity (report.json's findings, the HTML pages, a live schedule's name).
bool before(std::string_view a, std::string_view b);
// The names of the kinds any of `finders` can report, in registry order.
std::vector<std::string> names_found_by(unsigned finders);

}  // namespace racelab::sched::kinds
