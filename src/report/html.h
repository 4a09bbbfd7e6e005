#pragma once
// report.html for explore and suite: a summary table, and for every finding the interleaving as
// thread lanes over steps, the wait-for cycle and the replay command. docs/reports.md.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/suite.h"

namespace racelab::report {

struct HtmlScenario {
  const model::ScenarioRun* run;
  nlohmann::json report;  // what write_explore_outputs returned (schedule paths, replay commands)
};

std::string explore_html(const std::vector<HtmlScenario>& scenarios, const std::string& title,
                         double seconds);

// report.html for one replayed schedule: its findings (cycle, details) and the interleaving.
std::string replay_html(const std::string& schedule_path, const sched::ExecutionResult& result,
                        const std::string& expected_kind, bool reproduced);

// racelab explore --out DIR: write_explore_outputs (report.json, schedules) and DIR/report.html.
// Returns report.json's document.
nlohmann::json write_explore_files(const model::ScenarioRun& run, const std::string& dir);
// racelab replay --out DIR: DIR/report.html (replay_html), atomically; returns its path.
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
