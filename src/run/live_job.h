#pragma once
// A live run's use case, whichever its subject (racelab live torch, racelab live python, racelab
// replay of a live schedule): search, write the files (report/live_report.h), judge. Each kind of
// subject makes its live::Job (live/search.h) from options or from a schedule's header
// (torch_workload::make_job, live/torch/workload.h; python::make_job, live/python/bridge.h);
// replay_job makes the one a live schedule's header names, so that `racelab replay SCHEDULE`
// replays a live schedule exactly as `racelab live torch | python --replay SCHEDULE` does, with no
// command calling another.
#include <functional>
#include <string>
#include <string_view>

#include "live/search.h"
#include "sched/schedule.h"

namespace racelab::run {

using live::Job;
using live::Outcome;
using live::SearchOptions;

// racelab replay of a live schedule: `schedule` (as report::read_schedule read it from `path`)
// with the configuration its header records, replayed step by step. InputError for a schedule of
// another subject, or one this build cannot run (no LibTorch, no Python, too few devices).
Job replay_job(const sched::Schedule& schedule, const std::string& path);

// The options of a replay's one execution into `out`: the search's defaults otherwise (as
// racelab live torch | python --replay PATH --out OUT).
SearchOptions replay_options(const std::string& path, const std::string& out);

// A job's run, for the command line to print: what the search did and kept, the failing
// execution's schedule file and the other failure's (searched past; "" for none), the strategy as
// the report describes it, the verdict, and whether the process must end once it is printed.
struct JobRun {
  Outcome outcome;
  std::string schedule;
  std::string other_schedule;
  std::string strategy_desc;
  results::Verdict verdict;  // judge()'s
  int exit_code = 0;         // exit_code(verdict)
  // The command ends the process with std::_Exit after printing: where the job says so
  // (Job::exit_process) or an execution hung (its threads are stuck in real calls and cannot be
  // joined).
  bool end_process = false;
};

// Runs `job` under `options`: arms it (Job::arm) with the output directory, runs executions until
// a failure or the budget (search(), `stop` and `progress` as there), writes the files
// (report::write_outputs, src/report/live_report.h) and judges what was kept (judge()).
// InputError where a replay diverges.
JobRun run_job(const SearchOptions& options, Job& job, const std::function<bool()>& stop,
               const std::function<void(std::uint64_t, std::uint64_t)>& progress);

}  // namespace racelab::run
