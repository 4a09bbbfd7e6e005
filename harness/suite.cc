// racelab suite PATH...: run every scenario under its [explore] and check its [expect].
// Exit 0 only when every scenario passes: its expectations hold and, where it claims an absence
// under a proving strategy (dpor, dfs), the search covered its space (else it is inconclusive,
// exit 1).
#include "model/suite.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>

#include "command.h"
#include "report/cli.h"
#include "report/live_report.h"
#include "report/report.h"
#include "report/suite_run.h"
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
};

void print_scenario(const model::ScenarioRun& run, const nlohmann::json& report) {
  std::string found;
  for (const auto& f : run.result.found) found += (found.empty() ? "" : ", ") + f.finding.kind;
  fmt::print("{} {:<34} found [{}]; {}, {:.2f} s\n", verdict_word(run), run.scenario.name, found,
             run.coverage_brief(), run.result.seconds);
  for (const auto& d : run.result.determinism_failures)
    fmt::print("     not deterministic: {}\n", d);
  if (run.verdict() == model::Verdict::kInconclusive) fmt::print("     {}\n", run.verdict_reason());
  if (run.verdict() != model::Verdict::kFail) return;  // inconclusive: its reason said it all
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

void print_live_case(const model::LiveCaseRun& lr) {
  std::string found;
  for (const auto& [k, n] : lr.kinds) found += (found.empty() ? "" : ", ") + k;
  const std::string executions =
      lr.proven && lr.verdict == model::LiveVerdict::kPass
          ? fmt::format("proven ({}, exhaustive, {} executions)", lr.strategy, lr.executions)
          : fmt::format("{} executions", lr.executions);
  fmt::print("{} {:<34} (live) found [{}]; {}, {:.2f} s\n", model::live_verdict_word(lr.verdict),
             lr.scenario.name, found, executions, lr.seconds);
  if (!lr.memory.empty()) fmt::print("     {:<34} memory: {}\n", "", lr.memory_summary);
  if (!lr.reason.empty()) fmt::print("     {}\n", lr.reason);
  if (!lr.outside_verified.empty())
    fmt::print("     {}\n", paint("warning: " + lr.outside_verified, Colour::kYellow));
  // A clean live verdict says what it does not cover (its report.json: not_checked).
  if (lr.verdict == model::LiveVerdict::kPass && lr.scenario.must.empty())
    fmt::print("     {}\n", report::kPythonNotChecked);
  if (lr.verdict == model::LiveVerdict::kPass && lr.proven)
    fmt::print("     {}\n", report::live_dpor_covers(sched::kLivePythonSubject));
}

int run_suite(SuiteArgs a) {
  for (const auto& p : a.paths) {
    if (!std::filesystem::is_directory(p))
      report::expect_file(p, report::FileKind::kScenario, "suite PATH...");
  }
  const std::vector<model::Scenario> suite =
      model::load_suite(model::collect_scenario_files(a.paths));
  report::SuiteOptions o;
  // Without --out the reports and schedules go to the default directory, and the run says so.
  if (!a.out.empty()) o.out_dir = a.out;
  o.junit = a.junit;
  o.time_limit = a.time_limit;
  o.partition = partition_from(a.part);
  o.check_determinism = !a.no_check_determinism;
  o.interrupt = &interrupted();
  o.racelab = self_executable();
  o.progress = [](std::size_t k, std::size_t n, const model::Scenario& s, bool proves) {
    return progress_printer(fmt::format("[{}/{}] {}", k + 1, n, s.name), proves);
  };
  o.on_scenario = [](const model::ScenarioRun& run, const nlohmann::json& report) {
    clear_progress();
    print_scenario(run, report);
  };
  o.on_live_start = [](const model::Scenario& s) {
    fmt::print("{} {:<34} running live: {} ...\n", "....", s.name, s.live->script);
  };
  o.on_live = print_live_case;
  for (const model::Scenario& s : suite) {  // said once, before the first scenario runs
    if (s.live) continue;
    const std::string note = dpor_split_note(model::explore_options(s).strategy, o.partition,
                                             a.part, "each dpor scenario's search");
    if (note.empty()) continue;
    fmt::print(stderr, "{}\n", note);
    break;
  }
  const report::SuiteRun r = report::run_suite(suite, o);
  fmt::print("wrote {}/summary.json, {}/report.html and one report.json per scenario{}{}\n",
             o.out_dir, o.out_dir, a.junit.empty() ? "" : ", ", a.junit.empty() ? "" : a.junit);
  const std::string line =
      fmt::format("{} scenarios: {} passed, {} failed, {} inconclusive{}{} in {:.2f} s",
                  r.scenarios(), r.passed, r.failed, r.inconclusive,
                  r.skipped > 0 ? fmt::format(", {} skipped", r.skipped) : "",
                  r.interrupted ? " (interrupted)" : "", r.seconds);
  fmt::print("{}\n", paint(line, r.ok() ? Colour::kGreen : Colour::kRed));
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
  cmd->add_option("--time-limit", args->time_limit,
                  "per-scenario time limit in seconds (a dfs search it cuts short is inconclusive)")
      ->check(seconds_check());
  cmd->callback([&run, args] { run = [args] { return run_suite(*args); }; });
}

}  // namespace racelab::cli
