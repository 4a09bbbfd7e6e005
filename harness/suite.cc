// racelab suite PATH...: run every scenario under its [explore] and check its [expect].
// Exit 0 only when every scenario passes: its expectations hold and, where it claims an absence
// under dfs, the search covered its bounded space (else it is inconclusive, exit 1).
#include "model/suite.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <filesystem>

#include "command.h"
#include "racelab/version.h"
#include "report/cli.h"
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
  for (const auto& p : a.paths) {
    if (!std::filesystem::is_directory(p))
      report::expect_file(p, report::FileKind::kScenario, "suite PATH...");
  }
  const std::vector<model::Scenario> suite =
      model::load_suite(model::collect_scenario_files(a.paths));
  // Without --out the reports and schedules go to the default directory, and the run says so.
  const std::string out_dir = a.out.empty() ? std::string("racelab-out/suite") : a.out;
  std::vector<model::ScenarioRun> runs;
  std::vector<nlohmann::json> reports;
  runs.reserve(suite.size());
  std::vector<nlohmann::json> summary;
  int passed = 0, failed = 0, inconclusive = 0, skipped = 0;
  std::vector<model::LiveCaseRun> live_runs;
  for (const model::Scenario& sc : suite) {
    if (interrupted().load()) break;
    if (sc.live) {
      // A live case runs once, on the first shard (its executions are not split).
      if (a.partition.shard != 0) continue;
      const std::string dir = (std::filesystem::path(out_dir) / sc.name).string();
      fmt::print("{} {:<34} running live: {} ...\n", "....", sc.name, sc.live->script);
      model::LiveCaseRun lr = model::run_live_case(sc, self_executable(), dir);
      passed += lr.verdict == model::LiveVerdict::kPass;
      failed += lr.verdict == model::LiveVerdict::kFail;
      inconclusive += lr.verdict == model::LiveVerdict::kInconclusive;
      skipped += lr.verdict == model::LiveVerdict::kSkipped;
      std::string found;
      for (const auto& [k, n] : lr.kinds) found += (found.empty() ? "" : ", ") + k;
      fmt::print("{} {:<34} (live) found [{}]; {} executions, {:.2f} s\n",
                 model::live_verdict_word(lr.verdict), sc.name, found, lr.executions, lr.seconds);
      if (!lr.memory.empty()) fmt::print("     {:<34} memory: {}\n", "", lr.memory_summary);
      if (!lr.reason.empty()) fmt::print("     {}\n", lr.reason);
      summary.push_back(report::live_summary_entry(lr));
      live_runs.push_back(std::move(lr));
      continue;
    }
    sched::ExploreOptions o = model::explore_options(sc);
    o.time_limit_s = a.time_limit;
    o.partition = a.partition;
    o.check_determinism = !a.no_check_determinism;
    o.interrupt = &interrupted();
    o.progress = progress_printer(fmt::format("[{}/{}] {}", runs.size() + 1, suite.size(), sc.name),
                                  sched::strategy_proves(o.strategy.kind));
    model::ScenarioRun run = model::run_scenario(sc, o);
    clear_progress();
    const std::string dir = (std::filesystem::path(out_dir) / sc.name).string();
    nlohmann::json report = report::write_explore_outputs(run, dir);
    const model::Verdict v = run.verdict();
    passed += v == model::Verdict::kPass;
    failed += v == model::Verdict::kFail;
    inconclusive += v == model::Verdict::kInconclusive;
    std::string found;
    for (const auto& f : run.result.found) found += (found.empty() ? "" : ", ") + f.finding.kind;
    fmt::print("{} {:<34} found [{}]; {}, {:.2f} s\n", verdict_word(run), sc.name, found,
               run.coverage_brief(), run.result.seconds);
    for (const auto& d : run.result.determinism_failures)
      fmt::print("     not deterministic: {}\n", d);
    if (v == model::Verdict::kInconclusive) fmt::print("     {}\n", run.verdict_reason());
    if (!run.holds()) {
      if (!run.missing.empty())
        fmt::print("     expected but not found: {}\n", fmt::join(run.missing, ", "));
      for (const auto& k : run.unexpected) {
        const auto* f = run.result.find(k);
        fmt::print("     must not occur but found: {}: {}\n", k, report::message_text(f->finding));
        for (const auto& rf : report["findings"]) {
          if (rf["kind"] == k && rf["replay"].is_string())
            fmt::print("     replay: {}\n", rf["replay"].get<std::string>());
        }
      }
    }
    summary.push_back(report::suite_summary_entry(run, report, dir));
    runs.push_back(std::move(run));
    reports.push_back(std::move(report));
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ensure_directory(out_dir);
  const nlohmann::json doc =
      report::suite_summary(summary, interrupted().load(), seconds, a.partition);
  write_file_atomic(std::filesystem::path(out_dir) / "summary.json", document_text(doc));
  std::vector<report::HtmlScenario> pages;
  for (std::size_t k = 0; k < runs.size(); ++k) pages.push_back({&runs[k], reports[k]});
  write_file_atomic(std::filesystem::path(out_dir) / "report.html",
                    report::explore_html(pages, "racelab suite", seconds));
  if (!a.junit.empty()) write_file_atomic(a.junit, report::junit_xml(runs, seconds, live_runs));
  fmt::print("wrote {}/summary.json, {}/report.html and one report.json per scenario{}{}\n",
             out_dir, out_dir, a.junit.empty() ? "" : ", ", a.junit.empty() ? "" : a.junit);
  const bool ok = failed == 0 && inconclusive == 0 && !interrupted().load();
  const std::string line =
      fmt::format("{} scenarios: {} passed, {} failed, {} inconclusive{}{} in {:.2f} s",
                  runs.size() + live_runs.size(), passed, failed, inconclusive,
                  skipped > 0 ? fmt::format(", {} skipped", skipped) : "",
                  interrupted().load() ? " (interrupted)" : "", seconds);
  fmt::print("{}\n", paint(line, ok ? Colour::kGreen : Colour::kRed));
  return ok ? kExitOk : kExitFound;
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
  cmd->add_option("--time-limit", args->time_limit,
                  "per-scenario time limit in seconds (a dfs search it cuts short is inconclusive)")
      ->check(seconds_check());
  cmd->callback([&run, args] { run = [args] { return run_suite(*args); }; });
}

}  // namespace racelab::cli
