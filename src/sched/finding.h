#pragma once
// A finding: something an execution did that the user must hear about. Its kind is one of the
// registry's (sched/kinds.h), which says who finds it and whether it is a failure or evidence.
#include <cstdint>
#include <string>
#include <vector>

#include "sched/kinds.h"

namespace racelab::sched {

struct Finding {
  std::string kind;
  std::string message;               // one line
  std::int64_t step = -1;            // the step at which it was detected
  std::vector<std::string> details;  // e.g. every blocked thread and what it waits for
  std::vector<std::string> cycle;    // deadlock: the threads of the wait-for cycle, in order
};

}  // namespace racelab::sched
