// racelab live python: a Python script in the embedded interpreter (src/live/python), its threads
// under the scheduler or, with --uncontrolled, run as plain Python would; --alloc records its CUDA
// allocator history (src/live/python/racelab.py).
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "command.h"
#include "executables.h"
#include "live.h"
#include "live/python/bridge.h"
#include "live/python/follow.h"
#include "report/live_report.h"
#include "report/schedule_file.h"
#include "sched/schedule.h"
#include "sched/strategies/strategies.h"
#include "util/errors.h"
#include "util/files.h"

namespace racelab::cli::livecmd {

namespace {

// The files' stem of an allocator capture: the script's name.
std::string capture_name(const std::string& script) {
  return std::filesystem::path(script).stem().string();
}

void print_capture(const std::vector<std::string>& lines) {
  for (const auto& l : lines) fmt::print("allocator capture: {}\n", l);
}

// racelab live python --uncontrolled SCRIPT: one plain run (real threads, nothing interposed),
// with --alloc its allocator capture; --time-limit bounds it (a run still going then is a hang).
int run_plain_python(const LiveArgs& a) {
  namespace lp = live::python;
  if (a.script.empty()) throw InputError("live python --uncontrolled: a script is required");
  if (!a.replay.empty() || !a.follow.empty())
    throw InputError("live python --uncontrolled runs the script as it is: no --replay, --follow");
  expect_script(a.script);  // before the banner: bad input is one line
  lp::Job job{a.script, a.script_args, a.interpose, {}, a.dicts, a.locks, a.points, a.blockings};
  job.hash_seed = lp::hash_seed_from_environment();
  job.python = python_environment(a.python);
  if (!a.alloc.empty()) lp::start_alloc_capture(job, a.alloc, capture_name(a.script));
  fmt::print("live python --uncontrolled: {} (real threads{}); {}\n", a.script,
             a.time_limit > 0 ? fmt::format(", time limit {} s", a.time_limit) : "",
             lp::build_description());
  std::fflush(stdout);
  const lp::PlainRun r = lp::run_plain(job, a.time_limit);
  if (!a.alloc.empty()) print_capture(lp::finish_alloc_capture(r.ended()));
  report::UncontrolledRun run;
  run.parameters = lp::job_config(job);
  run.seconds = r.seconds;
  run.finished = r.finished;
  run.time_limit = a.time_limit;
  run.failures = r.failures;
  run.alloc = a.alloc;
  if (!r.finished) {
    ensure_directory(a.out);
    lp::dump_stacks((std::filesystem::path(a.out) / "stacks.txt").string());
  }
  const auto findings = report::write_uncontrolled_report(a.out, run);
  for (const auto& [kind, message] : findings)
    fmt::print("{}: {}\n", paint(kind, Colour::kRed), message);
  if (findings.empty())
    fmt::print("{} in {:.2f} s\n", paint("the script finished", Colour::kGreen), r.seconds);
  fmt::print("report: {}/report.json\n", a.out);
  std::fflush(stdout);
  std::fflush(stderr);
  // Not finalized: a hung run's threads are still in the interpreter.
  std::_Exit(findings.empty() ? kExitOk : kExitFound);
}

}  // namespace

std::string python_environment(const std::string& given) {
  if (!given.empty()) return given;
  const char* active = std::getenv("VIRTUAL_ENV");
  return active != nullptr ? active : "";
}

// racelab live python SCRIPT: the user's script in the embedded interpreter.
int run_python(LiveArgs a) {
  namespace lp = live::python;
  run_with(LiveComponent::kPython);  // the embedded interpreter: racelab-python
  if (a.uncontrolled) return run_plain_python(a);
  check_common(a);
  lp::Job job{a.script, a.script_args, a.interpose, {}, a.dicts, a.locks, a.points, a.blockings};
  if (a.replay.empty()) job.hash_seed = lp::hash_seed_from_environment();  // a replay's: recorded
  if (a.replay.empty()) job.python = python_environment(a.python);         // a replay's: recorded
  job.refuse_unverified = a.refuse_unverified;
  auto strategy = [&]() -> std::unique_ptr<sched::Strategy> {
    if (!a.follow.empty()) {
      if (a.script.empty()) throw InputError("live python: --follow needs the script to run");
      lp::Following f = lp::follow_schedule(report::read_schedule(a.follow), a.follow, a.interpose);
      fmt::print("following {} ({} of its {} steps map onto live operations)\n", a.follow,
                 f.steps.size(), f.model_steps);
      return std::make_unique<sched::FollowStrategy>(std::move(f.steps));
    }
    if (a.script.empty()) throw InputError("live python: a script is required (or --replay FILE)");
    return search_strategy(a);
  };
  live::Job run = lp::make_job(job, a.replay, recorded_schedule(a.replay), strategy);
  return print_run(search_options(a), run, [&] {
    if (a.alloc.empty()) return;
    lp::start_alloc_capture(job, a.alloc, capture_name(job.script));
    run.info.after_execution = [](std::uint64_t, const std::string& ended) {
      print_capture(lp::finish_alloc_capture(ended));  // the first execution only: once
    };
  });  // ends the process: the interpreter is not finalized
}

}  // namespace racelab::cli::livecmd
