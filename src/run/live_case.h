#pragma once
// Running a scenario's live case ([live], scenario.h): `racelab live python` as a child process (a
// live run may leave threads stuck in real calls and must end its process), its report.json read
// back and judged against the scenario's [expect], so that `racelab suite` keeps live
// race-regression jobs with the same verdicts, summary and JUnit as the model's.
//
// The search runs with `--expect deadlock` when [expect] has a `must` (it searches past other
// failures, stopping at a deadlock), else `--expect clean` (it stops at the first failure, which
// is all a `must_not` needs). Verdicts (results::judge, the one rule): skipped (requires_cuda
// without an NVIDIA device), pass, fail (a `must_not` kind seen, a `must` kind never seen by
// searches that finished, memory not as [live] alloc expects, racelab refused the case or wrote no
// report), and inconclusive (racelab lost control of a thread: exit 3; a `must` kind missing from a
// search that did not finish; a `must_not` absence a proving search cut short did not prove;
// memory not measured).
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/scenario.h"
#include "results/check_result.h"
#include "results/live_case_run.h"
#include "util/spawn.h"

namespace racelab::run {

using model::LiveCase;
using model::Scenario;
using results::LiveCaseRun;
using results::LivePython;

// The command line of one `racelab live python` child, as racelab suite's live cases and racelab
// check run it: built in one place (live_python_argv), its flags always in this order (the
// recorded commands in summary.json and check.json read the same from run to run). Flags left
// empty or unset are not passed.
struct LivePythonChild {
  std::string racelab;  // the racelab executable
  bool uncontrolled = false;
  std::string interpose;
  std::string alloc;                            // --alloc DIR: the allocator capture's directory
  std::optional<sched::StrategyKind> strategy;  // --strategy, spelled by its name
  std::optional<int> max_preemptions;
  std::optional<std::uint64_t> seed, executions;
  std::optional<unsigned> jobs;  // --jobs (dpor over worker processes)
  std::optional<double> hang_timeout, time_limit;
  std::string expect;  // results::live_expect_name
  std::string out;
  std::vector<std::string>
      flags;  // table and interpreter flags, as given (--dict=..., --python=...)
  std::string script;
  std::vector<std::string> args;  // the script's, after "--"
};
std::vector<std::string> live_python_argv(const LivePythonChild& c);

// Runs the live case of `s` (which must have one) with the racelab executable `racelab`, in the
// interpreter `python` names. A torch outside the table's range that `python` refuses is a FAIL
// with racelab's one line, as any case racelab live python refuses.
LiveCaseRun run_live_case(const Scenario& s, const std::string& racelab, const std::string& out_dir,
                          const LivePython& python = {});

}  // namespace racelab::run
