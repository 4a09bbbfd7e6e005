#pragma once
// racelab check: "did my warmup fix it?" in one command. For each argument set (variant) of a
// script, two verdicts, each from racelab run as a child process (a live run may leave threads
// stuck and must end its own process):
//
//   races   `racelab live python` under the scheduler, in two halves: a hunt, a budget of
//           executions with a sampling strategy (--expect clean: it stops at the first deadlock,
//           hang or exception), then, when the hunt found nothing, a proof: dpor without a bound
//           (--executions caps it). A proof that exhausts its space is "proven"; one cut short is
//           inconclusive, never a pass. --no-prove keeps the sample alone (worded as a sample);
//   memory  one uncontrolled run (`live python --uncontrolled --alloc`) that records the CUDA
//           caching allocator, judged by alloc report's analysis per device, in this process
//           (alloc/runs.h; its files in alloc-report/): stable from iteration k, or where it
//           grew. Not measured (no CUDA, torch missing) is said as such. A variant that grew is
//           explained against one that settled by alloc diff's lines (alloc/diff.h), also here.
//
// A variant passes when its races are proven (or, with --no-prove, none was sampled) and its memory
// is stable or not measurable here (a captured run that failed, an exception in a thread or a hang,
// fails it: its memory verdict is of a partial run, and the failure is the program's all the same);
// the check's exit code is the suite's: 0 every variant passes, 1 otherwise (inconclusive
// included).
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "results/check_result.h"
#include "run/live_case.h"

namespace racelab::run {

using results::CheckOptions;
using results::CheckResult;
using results::DeviceMemory;
using results::LivePython;
using results::MemoryVerdict;
using results::NativeRuns;
using results::RaceVerdict;
using results::VariantResult;

// Words as a POSIX shell splits them: whitespace separates, '...' and "..." quote, \ escapes.
// InputError for an unclosed quote.
std::vector<std::string> split_arguments(const std::string& text);

// Runs the check with the racelab executable `racelab`; `note` hears one line as each step
// starts (progress for a run that can take minutes). InputError for a missing script, and with
// the child's one line where racelab live python refused the input (exit 2: a bad table entry).
CheckResult run_check(const CheckOptions& o, const std::string& racelab,
                      const std::function<void(const std::string&)>& note);

// The memory half alone (also a scenario's live case with `alloc`): one uncontrolled run of the
// script with the allocator capture into DIR/alloc, then alloc report's analysis of it (in this
// process), its files into DIR/alloc-report.
MemoryVerdict capture_memory(const std::string& racelab, const std::string& script,
                             const std::vector<std::string>& args, const std::string& interpose,
                             const LivePython& python, const std::string& python_path,
                             double time_limit, std::int64_t settle, const std::string& dir);

}  // namespace racelab::run
