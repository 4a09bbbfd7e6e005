#pragma once
// A finding: something an execution did that the user must hear about. Its kind is one of the
// registry's (sched/kinds.h), which says who finds it and whether it is a failure or evidence.
#include <cstdint>
#include <string>
#include <vector>

#include "sched/kinds.h"

namespace racelab::sched {

// A frame of a Python exception's traceback: where the exception went through, and whether that
// is the user's code (not racelab's own modules, the standard library's threading, queue and
// concurrent.futures, or torch and other installed packages).
struct StackFrame {
  std::string file;
  int line = 0;
  std::string function;
  bool user = false;
};

struct Finding {
  std::string kind;
  std::string message;               // one line
  std::int64_t step = -1;            // the step at which it was detected
  std::vector<std::string> details;  // e.g. every blocked thread and what it waits for
  std::vector<std::string> cycle;    // deadlock: the threads of the wait-for cycle, in order
  std::vector<StackFrame> stack;     // a Python exception: its traceback, outermost first
  // The model thread running when it was detected (a crash: the one that raised it). Last, so
  // that positional initialisers of the fields above keep their meaning.
  std::string thread;
};

}  // namespace racelab::sched
