#pragma once
// racelab check's request and results (run/ runs it, report/ writes check.json and its page): the
// options, each variant's races, native runs and memory, the verdict of each variant through
// results::judge, and the words a table prints about them. LivePython, the interpreter every live
// child runs in, is also a live case's (racelab suite --python).
#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sched/finding.h"
#include "sched/loop.h"
#include "sched/strategies/strategies.h"
#include "sched/verdict.h"

namespace racelab::results {

// The interpreter a live child (`racelab live python`) runs in, as racelab check and racelab suite
// were told: --python ENV (empty: the child's own default, $VIRTUAL_ENV, which it inherits) and
// --refuse-other-torch, passed on with the same meaning as `racelab live python` gives them.
struct LivePython {
  std::string env;  // a virtual environment's directory or its bin/python; "" for the default
  bool refuse_other_torch = false;
  // The flags for a child. An uncontrolled run (`controlled` false) reads no table, so it checks
  // no versions: it gets --python alone (the controlled run before it has refused already).
  std::vector<std::string> flags(bool controlled) const;
};

struct CheckOptions {
  std::string script;
  std::vector<std::string> args;      // every variant's arguments start with these
  std::vector<std::string> variants;  // each one shell-like argument string (split_arguments)
  std::string interpose = "torch-2.11";
  std::vector<std::string> dicts, locks, points, blocking;  // live python's table flags
  LivePython python;  // --python ENV, --refuse-other-torch: every child runs in it
  // The hunt's: random is the soonest to the lazy deadlocks (docs/performance.md).
  sched::StrategyKind strategy = sched::StrategyKind::kRandom;
  std::uint64_t seed = 1;
  std::uint64_t executions = 20;
  bool prove = true;                       // after a clean hunt, dpor to exhaustion
  std::uint64_t proof_executions = 20000;  // the proof's cap: past it, inconclusive
  unsigned proof_jobs = 1;  // the proof's processes (live --jobs; 1: the proof runs in one)
  // Uncontrolled runs of a variant whose races found nothing (clean, proven or inconclusive): a
  // failure they show
  // that control never reached (a race inside native code, below racelab's scheduling points)
  // fails the variant in its own words.
  std::uint64_t native_runs = 1;
  double hang_timeout = 10;
  double time_limit = 600;  // seconds, for each child run
  bool memory = true;       // false: races only
  // Iterations allowed to allocate before growth counts against stability (alloc report
  // --settle); -1: the warm phase the capture shows (alloc/warm_phase.h).
  std::int64_t settle = -1;
  std::string out = "racelab-out/check";
  // Raised by SIGINT or SIGTERM: the check stops after the step it is in (its child asked to stop
  // too, util/spawn.h), runs nothing more and is no verdict (CheckResult::interrupted).
  const std::atomic<bool>* interrupt = nullptr;
};

struct RaceVerdict {
  // kClean: the hunt sampled none and no proof was asked for (--no-prove); kProven: the dpor
  // proof exhausted its space; kInconclusive: racelab lost control, the program was not
  // deterministic, or the proof was cut short (`reason` says which).
  enum class State { kClean, kProven, kFound, kInconclusive, kError };
  State state = State::kClean;
  std::uint64_t executions = 0;  // the hunt's
  std::uint64_t budget = 0;      // the executions it was given (--executions)
  // How the search stopped (report.json's stopped_by): a clean search the time limit or an
  // interrupt stopped before its budget says so (a sample's absence, of fewer executions).
  std::optional<sched::StopReason> stopped_by;
  std::map<std::string, std::uint64_t> kinds;  // kind -> executions that saw it
  std::string kind, message;                   // the failure found (kFound, kInconclusive)
  std::uint64_t execution = 0;                 // ... in this execution
  std::string schedule;                        // its schedule file
  // A Python exception's traceback (the live report's "stack"), outermost first.
  std::vector<sched::StackFrame> stack;
  std::string reason;  // kError: racelab's own line; kInconclusive: why
  // The torch or Python outside the table's verified range: the live run's one line, "" inside.
  std::string outside_verified;
  std::vector<std::string> argv;
  std::string log;
  double seconds = 0;
  // The proof (dpor), where it ran: after a clean hunt, unless --no-prove.
  struct Proof {
    bool ran = false;
    bool exhausted = false;
    std::uint64_t executions = 0, budget = 0, classes = 0;
    std::optional<sched::StopReason> stopped_by;  // its report.json's: exhausted, budget, ...
    std::string covers;  // what a live dpor proof covers (its report.json's proof_covers)
    std::vector<std::string> argv;
    std::string log;
    double seconds = 0;
  } proof;
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
  // Where this run did not settle and another variant's did: alloc diff (alloc/diff.h) of that
  // variant's trace against this one's, per device that grew (its lines, the summary first).
  std::string against;
  std::vector<std::string> explanation;
  std::vector<std::string> argv;
  std::string log;
  double seconds = 0;
};

// The uncontrolled runs of a variant whose races found nothing (--native-runs).
struct NativeRuns {
  std::uint64_t runs = 0, failed = 0;
  std::string kind, message;  // the first failure's
  std::vector<sched::StackFrame> stack;
  std::string log;  // the first failing run's (else the last run's)
  std::vector<std::string> argv;
  double seconds = 0;
};

struct VariantResult {
  std::string name;  // the variant's argument string ("(as given)" without --variant)
  std::vector<std::string> args;
  std::string dir;
  RaceVerdict races;
  NativeRuns native;
  MemoryVerdict memory;
  // Where an interrupt came while this variant ran: the step it was in ("races, the hunt"; ""
  // none) and the steps it left out ("the proof", "native runs", "memory"). Such a variant is no
  // verdict: inconclusive, unless what ran failed.
  std::string interrupted_in;
  std::vector<std::string> not_run;
  // results::judge on the variant: no failure kind (races, native runs), memory stable or not
  // measurable here. Fail where any run failed; inconclusive where the races alone were not
  // settled (a proof cut short, a subject not deterministic under control, racelab's lost
  // control) and nothing else failed; pass otherwise.
  results::Verdict verdict() const;
  bool passed() const { return verdict().passed(); }
  const char* verdict_word() const { return results::outcome_word(verdict().outcome); }
};

struct CheckResult {
  std::vector<VariantResult> variants;  // those that ran, in order (the last one cut short)
  double seconds = 0;
  bool interrupted = false;          // SIGINT or SIGTERM stopped the check: no verdict
  std::vector<std::string> not_run;  // the variants it never started
  int exit_code() const;  // 0 every variant passed and nothing interrupted the check, 1 otherwise
};

// An interrupted check in words, what was finished and what was not (the terminal's lines, and
// check.html's): "finished: --warmup none; cut short: --warmup sequential (in races, the proof;
// not run: native runs, memory); not run: --warmup compile". "" where it was not interrupted.
std::string interrupted_line(const CheckResult& r);
// Why an interrupted check is no verdict, one sentence.
extern const char* const kInterruptedWhy;

const char* race_state_name(RaceVerdict::State s);      // "clean", "found", ...
const char* memory_state_name(MemoryVerdict::State s);  // "stable", "unstable", ...
std::string race_summary(const RaceVerdict& r);         // one line for a table
// The races' line for a variant: race_summary, or, where native runs failed that control did not
// reach, that ("not reached under control; seen in 1 of 2 native runs: ...").
std::string races_line(const VariantResult& v);
// Why a failure seen only natively escapes control, in one sentence.
extern const char* const kNativeOnlyWhy;
std::string memory_summary(const MemoryVerdict& m);  // one line for a table
// What a capture showed, for results::judge (check's variants, a suite's live case).
results::MemoryFacts memory_facts(const MemoryVerdict& m);

}  // namespace racelab::results
