#pragma once
// The printing of a live run, the one piece of the command line that racelab live torch | python
// (live_torch.cc, live_python.cc) and racelab replay of a live schedule (replay.cc) share: the
// banner before it and the verdict after it. The run itself (the search, its files, when the
// process must end) is src/run/live_job.h's run::run_job.
#include <functional>

#include "run/live_job.h"

namespace racelab::cli::livecmd {

// Prints the job's replay warning (stderr) and banner, calls `after_banner` (live python --alloc
// starts its capture there), runs it (run::run_job, with progress and interrupts) and prints its
// verdict; the exit code. Ends the process after printing where the run says so
// (run::JobRun::end_process).
int print_run(const live::SearchOptions& options, live::Job& job,
              const std::function<void()>& after_banner = {});

}  // namespace racelab::cli::livecmd
