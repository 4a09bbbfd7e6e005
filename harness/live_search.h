#pragma once
// The live search's printer (live_search.cc), the one piece of the live family's command line
// that racelab replay shares with racelab live torch | python: it runs a prepared live job
// (src/live/job.h) and prints its verdict. Private to the command line.
#include <functional>

#include "live/job.h"
#include "live/search.h"

namespace racelab::cli::livecmd {

// Prints the job's replay warning (stderr) and banner, calls `after_banner` (live python --alloc
// starts its capture there) and the job's `arm`, runs executions until a failure or the budget
// (live::search, with progress and interrupts), writes the files and prints the verdict; the exit
// code. Ends the process where the job says so (Job::exit_process) or an execution hung: threads
// are stuck in real calls.
int run_job(const live::SearchOptions& so, live::Job& job,
            const std::function<void()>& after_banner = {});

}  // namespace racelab::cli::livecmd
