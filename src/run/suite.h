#pragma once
// racelab suite's run (harness/suite.cc parses its options and prints): every scenario in turn,
// model scenarios under their [explore] with their report.json, schedules and determinism check
// (report.h), live cases ([live]) through racelab itself (run/live_case.h), then the suite's
// files: summary.json, report.html and, when asked, JUnit XML. The terminal sees each scenario
// through the callbacks, as it ends.
#include <atomic>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/report.h"
#include "results/scenario_run.h"
#include "results/suite_totals.h"
#include "run/live_case.h"
#include "sched/explore.h"

namespace racelab::run {

using results::SuiteTotals;

struct SuiteOptions {
  std::string out_dir = "racelab-out/suite";  // DIR/summary.json, DIR/<scenario>/...
  std::string junit;                          // "": none
  double time_limit = 0;                      // per scenario, seconds; 0: none
  sched::Partition partition;
  bool check_determinism = true;
  const std::atomic<bool>* interrupt = nullptr;  // stops before the next scenario and execution
  std::string racelab;                           // the binary live cases run
  results::LivePython live_python;               // and the interpreter they run in
  // Progress of scenario `index` (0-based) of `total`; may return an empty function.
  std::function<std::function<void(const sched::ExploreProgress&)>(
      std::size_t index, std::size_t total, const model::Scenario& s, bool proves)>
      progress;
  // After each model scenario: its run and what was written for it (report.json, schedules).
  std::function<void(const results::ScenarioRun&, const report::ExploreOutput& written)>
      on_scenario;
  std::function<void(const model::Scenario&)> on_live_start;      // before a live case runs
  std::function<void(const results::LiveCaseRun&)> on_live;       // after it
  std::function<void(const model::Scenario&)> on_live_elsewhere;  // a shard K > 0 leaves it out
};

struct SuiteRun {
  std::vector<results::ScenarioRun> runs;
  std::vector<std::vector<report::FoundOutput>> found;  // runs[k]'s schedules and replay commands
  std::vector<results::LiveCaseRun> live_runs;
  std::vector<std::string> live_elsewhere;  // a shard K > 0: the live cases shard 0 runs
  SuiteTotals totals;
  bool ok() const { return totals.ok(); }
};

// What racelab suite and racelab merge wrote: summary.json, report.html and the JUnit file, in
// one line ("wrote results/summary.json, results/report.html and one report.json per scenario,
// junit.xml").
std::string wrote_line(const std::string& out_dir, const std::string& junit);

// Runs `suite` and writes its files (summary.json, report.html, the JUnit file).
SuiteRun run_suite(const std::vector<model::Scenario>& suite, const SuiteOptions& o);

}  // namespace racelab::run
