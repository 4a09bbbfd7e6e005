#pragma once
// racelab check: "did my warmup fix it?" in one command. For each argument set (variant) of a
// script, two verdicts, each from racelab run as a child process (a live run may leave threads
// stuck and must end its own process):
//
//   races   `racelab live python` under the scheduler, a budget of executions with one strategy
//           (--expect clean: it stops at the first deadlock, hang or exception);
//   memory  one uncontrolled run (`live python --uncontrolled --alloc`) that records the CUDA
//           caching allocator, judged by `racelab alloc report` per device: stable from
//           iteration k, or where it grew. Not measured (no CUDA, torch missing) is said as such.
//
// A variant passes when no race was found and its memory is stable or not measurable here (a
// captured run that failed, an exception in a thread or a hang, fails it: its memory verdict is
// of a partial run, and the failure is the program's all the same); the
// check's exit code is the suite's: 0 every variant passes, 1 otherwise (inconclusive included).
#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace racelab::model {

struct CheckOptions {
  std::string script;
  std::vector<std::string> args;      // every variant's arguments start with these
  std::vector<std::string> variants;  // each one shell-like argument string (split_arguments)
  std::string interpose = "torch-2.11";
  std::vector<std::string> dicts, locks, points, blocking;  // live python's table flags
  std::string strategy = "random";  // the soonest to the lazy deadlocks (docs/performance.md)
  std::uint64_t seed = 1;
  std::uint64_t executions = 20;
  double hang_timeout = 10;
  double time_limit = 600;  // seconds, for each child run
  bool memory = true;       // false: races only
  // Iterations allowed to allocate before growth counts against stability (alloc report
  // --settle); -1: the warm phase the capture shows (alloc/warm_phase.h).
  std::int64_t settle = -1;
  std::string out = "racelab-out/check";
};

struct RaceVerdict {
  enum class State { kClean, kFound, kInconclusive, kError };
  State state = State::kClean;
  std::uint64_t executions = 0;
  std::uint64_t budget = 0;  // the executions it was given (--executions)
  // How the search stopped (report.json's stopped_by): a clean search the time limit or an
  // interrupt stopped before its budget says so (a sample's absence, of fewer executions).
  std::string stopped_by;
  std::map<std::string, std::uint64_t> kinds;  // kind -> executions that saw it
  std::string kind, message;                   // the failure found (kFound, kInconclusive)
  std::uint64_t execution = 0;                 // ... in this execution
  std::string schedule;                        // its schedule file
  // A Python exception's traceback (the live report's "stack"): {file, line, function, user}.
  nlohmann::json stack = nlohmann::json::array();
  std::string reason;  // kError: racelab's own line
  // The torch or Python outside the table's verified range: the live run's one line, "" inside.
  std::string outside_verified;
  std::vector<std::string> argv;
  std::string log;
  double seconds = 0;
};

struct DeviceMemory {
  std::string name;  // the trace's name, e.g. train.cuda0
  bool stable = false;
  bool measured = true;  // false: too few iterations after the warm phase to tell
  std::string verdict;   // alloc report's words
  std::optional<std::int64_t> stable_from;
  std::int64_t peak_reserved = 0;
  std::int64_t segments_first = 0, segments_last = 0;
  std::int64_t reserved_first = 0, reserved_last = 0;
  std::vector<std::string> labels;                  // each iteration's (or window's) label
  std::vector<double> reserved_mib, allocated_mib;  // at the end of each
  std::vector<std::string> growth_at;               // labels of those with device allocations
  std::size_t iterations = 0;
};

struct MemoryVerdict {
  enum class State { kStable, kUnstable, kNotMeasured, kError };
  State state = State::kNotMeasured;
  std::string reason;   // kNotMeasured / kError: why
  std::string ended;    // how the captured run ended: "complete", "hang", a finding's kind
  std::string failure;  // ... and, where it failed, the first failure's message
  std::vector<DeviceMemory> devices;
  std::int64_t settle = -1;  // what alloc report was given as --settle; -1: none (the warm phase)
  std::string report_dir;    // alloc report's report.html and alloc-report.json
  std::vector<std::string> argv;
  std::string log;
  double seconds = 0;
};

struct VariantResult {
  std::string name;  // the variant's argument string ("(as given)" without --variant)
  std::vector<std::string> args;
  std::string dir;
  RaceVerdict races;
  MemoryVerdict memory;
  bool passed() const;
};

struct CheckResult {
  std::vector<VariantResult> variants;
  double seconds = 0;
  int exit_code() const;  // 0 every variant passed, 1 otherwise
};

// Words as a POSIX shell splits them: whitespace separates, '...' and "..." quote, \ escapes.
// InputError for an unclosed quote.
std::vector<std::string> split_arguments(const std::string& text);

// Runs the check with the racelab executable `racelab`; `note` hears one line as each step
// starts (progress for a run that can take minutes). InputError for a missing script, and with
// the child's one line where racelab live python refused the input (exit 2: a bad table entry).
CheckResult run_check(const CheckOptions& o, const std::string& racelab,
                      const std::function<void(const std::string&)>& note);

// The memory half alone (also a scenario's live case with `alloc`): one uncontrolled run of the
// script with the allocator capture into DIR/alloc, then alloc report into DIR/alloc-report.
MemoryVerdict capture_memory(const std::string& racelab, const std::string& script,
                             const std::vector<std::string>& args, const std::string& interpose,
                             const std::string& python_path, double time_limit, std::int64_t settle,
                             const std::string& dir);

const char* race_state_name(RaceVerdict::State s);      // "clean", "found", ...
const char* memory_state_name(MemoryVerdict::State s);  // "stable", "unstable", ...
std::string race_summary(const RaceVerdict& r);         // one line for a table
std::string memory_summary(const MemoryVerdict& m);     // one line for a table

nlohmann::ordered_json check_json(const CheckResult& r, const CheckOptions& o);

}  // namespace racelab::model
