#pragma once
// What a run is expected to show, and the check of it against the kinds a run found, for every
// command that judges (sched/verdict.h's judge): a scenario's [expect] (model scenarios and live
// cases), racelab live's --expect, racelab check's races (no failure) and memory, alloc report's
// --expect. Typed once where they are read (scenario.cc, the command line); never compared as
// strings again. In sched/ (it needs only sched/kinds.h), below model/ and live/, which read
// it; named results:: as every command knows it.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace racelab::results {

// An allocator expectation: [live] alloc, alloc report --expect.
enum class MemoryExpect { kStable, kUnstable };
const char* memory_expect_name(MemoryExpect m);                          // "stable", "unstable"
std::optional<MemoryExpect> parse_memory_expect(std::string_view name);  // nullopt: neither
// Every value with its name, in that order: the one table the scenario reader and the command
// line's transformer (harness/transformers.h) parse with.
std::vector<std::pair<std::string, MemoryExpect>> memory_expect_table();

// racelab live --expect: clean (no failure kind at all) or deadlock (a deadlock must be found).
enum class LiveExpect { kClean, kDeadlock };
const char* live_expect_name(LiveExpect e);                           // "clean", "deadlock"
std::optional<LiveExpect> parse_live_expect(std::string_view name);   // nullopt: neither
std::vector<std::pair<std::string, LiveExpect>> live_expect_table();  // as memory_expect_table

struct Expectations {
  std::vector<std::string> must;      // kinds (sched/kinds.h) that must be found
  std::vector<std::string> must_not;  // kinds that must not
  // No failure kind at all may occur (racelab live --expect clean, racelab check's races): a
  // failure found fails it, and it claims an absence as must_not does.
  bool no_failure = false;
  std::optional<MemoryExpect> memory;
  // racelab check: memory that could not be measured here (no CUDA, too few iterations) passes;
  // elsewhere it leaves the verdict inconclusive.
  bool unmeasured_memory_passes = false;
};

// What --expect asks of a live search: clean, no failure kind (an absence claimed); deadlock, a
// deadlock that must be found.
Expectations expectations_for(LiveExpect e);

struct ExpectationCheck {
  std::vector<std::string> missing;     // in must, never found; in report order
  std::vector<std::string> unexpected;  // in must_not, found; in report order
  bool holds() const { return missing.empty() && unexpected.empty(); }
};

// `found`: the kinds the run found, in any order, each any number of times. Report order is
// sched::kinds::before.
ExpectationCheck check_expectations(const std::vector<std::string>& must,
                                    const std::vector<std::string>& must_not,
                                    const std::vector<std::string>& found);

// "expected but not found: A, B; found but must not occur: C"; empty when the check holds.
std::string expectation_reason(const ExpectationCheck& check);

}  // namespace racelab::results
