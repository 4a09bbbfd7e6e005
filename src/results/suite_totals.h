#pragma once
// A suite's counts of outcomes (racelab suite, racelab merge; report/ writes them).
#include <cstddef>
#include <string>

#include "sched/verdict.h"

namespace racelab::results {

// The counts of a suite's verdicts, the same on the terminal, in summary.json, JUnit XML and
// report.html (racelab suite, racelab merge).
struct SuiteTotals {
  std::size_t scenarios = 0;
  int passed = 0, failed = 0, inconclusive = 0, skipped = 0;
  int pending = 0;    // a shard's: what racelab merge judges (results::Outcome::kPending)
  int elsewhere = 0;  // a shard's live cases that run whole on shard 0, not counted above
  std::string shard;  // "shard 1/4"; empty when not a shard
  bool interrupted = false;
  double seconds = 0;
  void add(results::Outcome v);  // a model scenario's or a live case's
  // Every scenario passed, was skipped or waits for merge, and nothing interrupted the run: exit 0.
  bool ok() const { return failed == 0 && inconclusive == 0 && !interrupted; }
  // "19 scenarios: 17 passed, 0 failed, 0 inconclusive, 2 skipped in 4.21 s", a shard's
  // "shard 0/4: 15 scenarios: 1 passed, 0 failed, 0 inconclusive, 14 pending (racelab merge
  // judges them) in 1.10 s".
  std::string line() const;
};

}  // namespace racelab::results
