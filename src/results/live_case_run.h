#pragma once
// A suite's live case as it ran ([live], model/scenario.h; run/ runs it, report/ writes it):
// results::judge's outcome and reason, the kinds it saw, its command and output directory.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/scenario.h"
#include "sched/verdict.h"

namespace racelab::results {

struct LiveCaseRun {
  model::Scenario scenario;
  results::Outcome verdict = results::Outcome::kPass;  // results::judge's
  std::string reason;                                  // its one line; empty for a pass
  std::map<std::string, std::uint64_t> kinds;          // kind -> executions that saw it
  std::uint64_t executions = 0;
  // A proving search (dpor) that exhausted its space: the pass is a proof over what racelab sees.
  bool proven = false;
  std::string strategy;  // the case's, for the proof's words
  int exit_code = 0;
  double seconds = 0;
  std::string out_dir;                  // the live run's report.json, trace.txt, live.log
  std::vector<std::string> argv;        // the command it ran
  std::string recorded_command;         // read back from a summary.json (racelab merge)
  std::vector<std::string> missing;     // in expect.must, never seen
  std::vector<std::string> unexpected;  // in expect.must_not, seen
  // With [live] alloc: the allocator verdict of one uncontrolled run ("stable", "unstable",
  // "not_measured", "error") and its one-line summary.
  std::string memory;
  std::string memory_summary;
  // The live run's torch or Python outside its table's verified range: its one line
  // (report.json's versions.outside), "" inside.
  std::string outside_verified;
  std::string command() const;  // argv as one shell line (or the recorded command)
};

}  // namespace racelab::results
