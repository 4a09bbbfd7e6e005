#pragma once
// Shrinking: make a failing schedule easier to read by removing preemptions while keeping the
// finding. A schedule with fewer preemptions tells a shorter story ("A is preempted here, B runs to
// its block, A continues") and is what users paste into bug reports.
//
// Policy: for each preemption (switch away from a thread that could have continued), try letting
// the previous thread continue instead, first following the rest of the original choices, then with
// no further preemptions at all. Accept a candidate only when it reproduces the same finding kind
// with strictly fewer preemptions; repeat until no candidate helps or the attempt budget is spent.
// The result therefore never has more preemptions than the input and always keeps the finding.
#include <cstdint>
#include <string>
#include <vector>

#include "sched/engine.h"

namespace racelab::sched {

struct ShrinkResult {
  ExecutionResult result;  // the shrunk execution (its steps are the new schedule)
  std::uint64_t original_preemptions = 0;
  int attempts = 0;
};

// Throws StrategyError when `choices` does not reproduce `kind` to begin with.
ShrinkResult shrink(Subject& subject, const std::vector<ThreadId>& choices, const std::string& kind,
                    const RunOptions& options = {}, int max_attempts = 400);

}  // namespace racelab::sched
