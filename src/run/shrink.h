#pragma once
// racelab shrink SCHEDULE -o OUT: a model schedule's finding kept with fewer preemptions. The
// schedule is replayed against its scenario, shrunk (sched/shrink.h says how) and written as the
// other schedule writers write theirs: its header through sched::make_schedule, the file
// atomically. The command line (harness/shrink.cc) prints the counts.
#include <cstddef>
#include <cstdint>
#include <string>

namespace racelab::run {

struct ShrinkSummary {
  std::uint64_t preemptions_before = 0;
  std::uint64_t preemptions_after = 0;
  std::size_t steps_before = 0;
  std::size_t steps_after = 0;
  int attempts = 0;
};

// Reads the schedule at `schedule` (`scenario`: its scenario file when it moved since recording,
// else ""), shrinks it and writes the result to `out`: the same header (subject, strategy,
// execution, finding kind) with this racelab's version, the shrunk execution's preemptions and
// steps, and the message of its finding of that kind. InputError for a file that is not a
// schedule, a schedule without a finding, or one that does not reproduce its finding.
ShrinkSummary shrink_schedule(const std::string& schedule, const std::string& out,
                              const std::string& scenario);

}  // namespace racelab::run
