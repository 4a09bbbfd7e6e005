// racelab suite PATH...: run every scenario under its [explore] and check its [expect].
// Exit 0 only when every expectation holds.
#include "model/suite.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <filesystem>

#include "command.h"
#include "racelab/version.h"
#include "report/html.h"
#include "report/report.h"
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
  sched::Partition partition;
  bool no_check_determinism = false;
};

int run_suite(SuiteArgs a) {
  a.partition = partition_from(a.part);
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<model::Scenario> suite =
      model::load_suite(model::collect_scenario_files(a.paths));
  std::vector<model::ScenarioRun> runs;
  std::vector<nlohmann::json> reports;
  runs.reserve(suite.size());
  std::vector<nlohmann::json> summary;
  int failed = 0;
  for (const model::Scenario& sc : suite) {
    if (interrupted().load()) break;
    sched::ExploreOptions o = model::explore_options(sc);
    o.time_limit_s = a.time_limit;
    o.partition = a.partition;
    o.check_determinism = !a.no_check_determinism;
    o.interrupt = &interrupted();
    o.progress =
        progress_printer(fmt::format("[{}/{}] {}", runs.size() + 1, suite.size(), sc.name));
    model::ScenarioRun run = model::run_scenario(sc, o);
    clear_progress();
    const std::string dir = a.out.empty() ? "" : (std::filesystem::path(a.out) / sc.name).string();
    nlohmann::json report = report::write_explore_outputs(run, dir);
    failed += run.holds() ? 0 : 1;
    std::string found;
    for (const auto& f : run.result.found) found += (found.empty() ? "" : ", ") + f.finding.kind;
    fmt::print("{} {:<34} found [{}]; {} executions{}, {:.2f} s\n",
               run.holds() ? paint("PASS", Colour::kGreen) : paint("FAIL", Colour::kRed), sc.name,
               found, run.result.executions, run.result.exhausted() ? " (exhaustive)" : "",
               run.result.seconds);
    for (const auto& d : run.result.determinism_failures)
      fmt::print("     not deterministic: {}\n", d);
    if (!run.holds()) {
      if (!run.missing.empty())
        fmt::print("     expected but not found: {}\n", fmt::join(run.missing, ", "));
      for (const auto& k : run.unexpected) {
        const auto* f = run.result.find(k);
        fmt::print("     must not occur but found: {}: {}\n", k, f->finding.message);
        if (!report["findings"].empty() && !dir.empty()) {
          for (const auto& rf : report["findings"]) {
            if (rf["kind"] == k) fmt::print("     replay: {}\n", rf["replay"].get<std::string>());
          }
        }
      }
    }
    summary.push_back(report::suite_summary_entry(run, report, dir));
    runs.push_back(std::move(run));
    reports.push_back(std::move(report));
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!a.out.empty()) {
    ensure_directory(a.out);
    const nlohmann::json doc =
        report::suite_summary(summary, failed, interrupted().load(), seconds, a.partition);
    write_file_atomic(std::filesystem::path(a.out) / "summary.json", doc.dump(2) + "\n");
    std::vector<report::HtmlScenario> pages;
    for (std::size_t k = 0; k < runs.size(); ++k) pages.push_back({&runs[k], reports[k]});
    write_file_atomic(std::filesystem::path(a.out) / "report.html",
                      report::explore_html(pages, "racelab suite", seconds));
  }
  if (!a.junit.empty()) write_file_atomic(a.junit, report::junit_xml(runs, seconds));
  const std::string line = fmt::format("{} scenarios: {} passed, {} failed{} in {:.2f} s",
                                       runs.size(), static_cast<int>(runs.size()) - failed, failed,
                                       interrupted().load() ? " (interrupted)" : "", seconds);
  fmt::print("{}\n",
             paint(line, failed == 0 && !interrupted().load() ? Colour::kGreen : Colour::kRed));
  return failed == 0 && !interrupted().load() ? kExitOk : kExitFound;
}

}  // namespace

void add_suite(CLI::App& app, Runner& run) {
  auto args = std::make_shared<SuiteArgs>();
  auto* cmd = app.add_subcommand("suite", "Run scenarios and check their [expect] tables");
  cmd->add_option("paths", args->paths, "scenario files or directories (searched for *.toml)")
      ->required();
  cmd->add_option("--junit", args->junit, "write JUnit XML here");
  cmd->add_option("--out", args->out, "write DIR/summary.json and DIR/<scenario>/report.json");
  add_partition_options(cmd, args->part);
  cmd->add_flag("--no-check-determinism", args->no_check_determinism,
                "skip re-executing every finding's schedule to compare the traces step by step");
  cmd->add_option("--time-limit", args->time_limit, "per-scenario time limit in seconds")
      ->check(CLI::NonNegativeNumber);
  cmd->callback([&run, args] { run = [args] { return run_suite(*args); }; });
}

}  // namespace racelab::cli
