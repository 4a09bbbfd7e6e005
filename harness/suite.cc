// racelab suite PATH...: run every scenario under its [explore] and check its [expect].
// Exit 0 only when every scenario passes: its expectations hold and, where it claims an absence
// under a proving strategy (dpor, dfs), the search covered its space (else it is inconclusive,
// exit 1). A shard (--shard K/N) exits 1 only for what it settles alone (a failure it found, an
// inconclusive live case); the rest is pending, for racelab merge to judge.
#include "model/suite.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>

#include "command.h"
#include "report/cli.h"
#include "report/live_report.h"
#include "report/report.h"
#include "results/scenario_run.h"
#include "run/explore.h"
#include "run/suite.h"
#include "sched/strategies/strategies.h"
#include "suite_print.h"
#include "util/errors.h"
#include "util/files.h"

namespace racelab::cli {

namespace {

struct SuiteArgs {
  std::vector<std::string> paths;
  std::string junit;
  std::string out;
  double time_limit = 0;
  PartitionArgs part;
  bool no_check_determinism = false;
  results::LivePython python;  // the live cases' interpreter
};

int run_suite(SuiteArgs a) {
  for (const auto& p : a.paths) {
    if (!std::filesystem::is_directory(p))
      report::expect_file(p, report::FileKind::kScenario, "suite PATH...");
  }
  const std::vector<model::Scenario> suite =
      model::load_suite(model::collect_scenario_files(a.paths));
  run::SuiteOptions o;
  // Without --out the reports and schedules go to the default directory, and the run says so.
  if (!a.out.empty()) o.out_dir = a.out;
  o.junit = a.junit;
  o.time_limit = a.time_limit;
  o.partition = partition_from(a.part);
  o.check_determinism = !a.no_check_determinism;
  o.interrupt = &interrupted();
  o.racelab = self_executable();
  o.live_python = a.python;
  o.progress = [](std::size_t k, std::size_t n, const model::Scenario& s, bool proves) {
    return progress_printer(fmt::format("[{}/{}] {}", k + 1, n, s.name), proves);
  };
  o.on_scenario = [](const results::ScenarioRun& run, const report::ExploreOutput& written) {
    clear_progress();
    print_suite_scenario(run, written);
  };
  o.on_live_start = [](const model::Scenario& s) {
    fmt::print("{} {:<34} running live: {} ...\n", "....", s.name, s.live->script);
  };
  o.on_live = print_suite_live_case;
  o.on_live_elsewhere = [&o](const model::Scenario& s) {
    fmt::print("{} {:<34} (live) runs whole on shard 0/{}\n", "----", s.name, o.partition.shards);
  };
  for (const model::Scenario& s : suite) {  // said once, before the first scenario runs
    if (s.live) continue;
    const sched::StrategyParams strategy = run::explore_options(s).strategy;
    const std::string note = split_note(
        strategy, o.partition, a.part,
        fmt::format("each {} scenario's search", sched::strategy_info(strategy.kind).name));
    if (note.empty()) continue;
    fmt::print(stderr, "{}\n", note);
    break;
  }
  const run::SuiteRun r = run::run_suite(suite, o);
  print_suite_end(r.totals, o.out_dir, a.junit);
  return r.ok() ? kExitOk : kExitFound;
}

}  // namespace

void add_suite(CLI::App& app, Runner& run) {
  auto args = std::make_shared<SuiteArgs>();
  auto* cmd = app.add_subcommand("suite", "Run scenarios and check their [expect] tables");
  cmd->add_option("paths", args->paths, "scenario files or directories (searched for *.toml)")
      ->required();
  cmd->add_option("--junit", args->junit, "write JUnit XML here");
  cmd->add_option("--out", args->out,
                  "write DIR/summary.json, DIR/report.html and DIR/<scenario>/report.json "
                  "(default: racelab-out/suite)");
  add_partition_options(cmd, args->part);
  cmd->add_flag("--no-check-determinism", args->no_check_determinism,
                "skip re-executing every finding's schedule to compare the traces step by step");
  add_live_python_options(cmd, args->python, "the live cases ([live])");
  cmd->add_option("--time-limit", args->time_limit,
                  "per-scenario time limit in seconds (a dfs search it cuts short is inconclusive)")
      ->check(seconds_check());
  cmd->callback([&run, args] { run = [args] { return run_suite(*args); }; });
}

}  // namespace racelab::cli
