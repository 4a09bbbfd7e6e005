#pragma once
// A finding: something an execution did that the user must hear about. Kinds are open strings so
// that subjects add their own (the pipeline model adds duplicate_compile, oom, ...); the
// scheduler's own checkers produce the kinds listed in kCoreKinds.
#include <cstdint>
#include <string>
#include <vector>

namespace racelab::sched {

namespace kinds {
inline constexpr const char* kDeadlock = "deadlock";
inline constexpr const char* kDataRace = "data_race";
inline constexpr const char* kAssertion = "assertion";
inline constexpr const char* kLivelock = "livelock";
inline constexpr const char* kException = "exception";
}  // namespace kinds

struct Finding {
  std::string kind;
  std::string message;               // one line
  std::int64_t step = -1;            // the step at which it was detected
  std::vector<std::string> details;  // e.g. every blocked thread and what it waits for
  std::vector<std::string> cycle;    // deadlock: the threads of the wait-for cycle, in order
};

}  // namespace racelab::sched
