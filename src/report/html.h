#pragma once
// report.html for explore and suite: a summary table, and for every finding the interleaving as
// thread lanes over steps, the wait-for cycle and the replay command. docs/reports.md.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/report.h"
#include "results/live_case_run.h"
#include "results/scenario_run.h"
#include "results/suite_totals.h"

namespace racelab::report {

struct HtmlScenario {
  const results::ScenarioRun* run;
  std::vector<FoundOutput> found;  // what write_explore_outputs wrote (schedules, replay commands)
};

// The page of a suite, a shard of one or a merge (suite_html.cc): it opens on the answer, the
// totals line the terminal prints and one row per scenario (model and live) with its verdict and,
// for anything but a pass, its one-line cause; then each scenario's findings, every finding's
// wait-for cycle and interleaving folded (<details>) until asked for, unless `open`.
struct SuitePage {
  std::string title;
  std::vector<HtmlScenario> scenarios;
  const std::vector<results::LiveCaseRun>* live = nullptr;  // live cases ([live]), run or merged
  std::vector<std::string> live_elsewhere;  // a shard K > 0: the live cases shard 0 runs
  results::SuiteTotals totals;
  bool open = false;  // interleavings shown open (one scenario: racelab explore)
};
std::string suite_html(const SuitePage& page);

// racelab explore's page (and a merged exploration's): suite_html of its one scenario, open.
std::string explore_html(const std::vector<HtmlScenario>& scenarios, const std::string& title,
                         double seconds);

// report.html for one replayed schedule: its findings (cycle, details) and the interleaving.
std::string replay_html(const std::string& schedule_path, const sched::ExecutionResult& result,
                        const std::string& expected_kind, bool reproduced);

// racelab explore --out DIR: write_explore_outputs (report.json, schedules) and DIR/report.html.
// Returns report.json's document.
ExploreOutput write_explore_files(const results::ScenarioRun& run, const std::string& dir);
// racelab replay --out DIR: DIR/report.json (format racelab-replay-report: the schedule, the
// expected kind, whether it was reproduced, the steps and every finding) and DIR/report.html
// (replay_html), each atomically; returns their paths, "DIR/report.json, DIR/report.html".
std::string write_replay_page(const std::string& dir, const std::string& schedule_path,
                              const sched::ExecutionResult& result,
                              const std::string& expected_kind, bool reproduced);

// One execution as a table (a <table class="lanes">): one column per thread, one row per step, the
// operation written in its thread's column; a marked row where a finding was detected; a last row
// with every thread's state at the end (finished, blocked and on what, stopped). Past 100 steps it
// shows the 50 leading to the finding and folds the rest (<details>).
std::string interleaving_html(const sched::Execution& exec, const sched::Finding* finding);

// What the colours of interleaving_html mean (a <div class="legend">).
std::string legend_html();

// The wait-for cycle of a deadlock (an <svg class="cycle">), each arrow labelled with what its
// thread waits for when `exec` is given; empty when there is no cycle.
std::string cycle_svg(const sched::Finding& finding, const sched::Execution* exec = nullptr);

}  // namespace racelab::report
