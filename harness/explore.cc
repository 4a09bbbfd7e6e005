// racelab explore SCENARIO: explore the interleavings of one scenario, write report.json and one
// shrunk schedule per finding kind, print each finding with the command that replays it.
// Exit 1 when a failure kind was found or the scenario's expectations do not pass (fail or
// inconclusive), 0 otherwise: evidence kinds alone never make it 1.
#include "run/explore.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <map>
#include <optional>

#include "command.h"
#include "model/profile.h"
#include "report/cli.h"
#include "report/html.h"
#include "report/report.h"
#include "report/schedule_paths.h"
#include "results/scenario_run.h"
#include "sched/strategies/strategies.h"
#include "transformers.h"
#include "util/errors.h"
#include "util/files.h"

namespace racelab::cli {

namespace {

struct ExploreArgs {
  std::string scenario;
  std::optional<sched::StrategyKind> strategy;
  std::optional<std::uint64_t> seed, iterations;
  std::optional<int> depth, max_preemptions;
  double time_limit = 0;
  std::string out;
  PartitionArgs part;
  bool check_determinism = false;
  bool no_shrink = false;
  // The strategies' own options (sched::StrategyInfo::options), by flag: a map, so that the
  // places CLI11 writes to stay put.
  std::map<std::string, bool> strategy_flags;
  std::map<std::string, std::optional<std::uint64_t>> strategy_numbers;
  std::string backend = "coroutine";
  std::string torch;  // --torch: the torch version (profile) to explore under
};

int run_explore(const ExploreArgs& a) {
  report::expect_file(a.scenario, report::FileKind::kScenario, "explore SCENARIO");
  model::Scenario sc = model::load_scenario(a.scenario);
  if (!a.torch.empty()) model::apply_torch(sc, a.torch);
  sched::ExploreOptions o = run::explore_options(sc);
  if (a.strategy) o.strategy.kind = *a.strategy;
  if (a.seed) o.strategy.seed = *a.seed;
  if (a.iterations) o.iterations = *a.iterations;
  if (a.depth) o.strategy.depth = *a.depth;
  if (a.max_preemptions) o.strategy.max_preemptions = *a.max_preemptions;
  if (a.max_preemptions) o.strategy.explicit_bound = *a.max_preemptions;
  std::vector<std::pair<std::string, std::uint64_t>> own;
  for (const auto& [flag, given] : a.strategy_flags) {
    if (given) own.emplace_back(flag, 1);
  }
  for (const auto& [flag, value] : a.strategy_numbers) {
    if (value) own.emplace_back(flag, *value);
  }
  sched::apply_strategy_options(o.strategy, own);
  o.time_limit_s = a.time_limit;
  o.shrink = !a.no_shrink;
  o.run.backend = a.backend == "threads" ? sched::Backend::kThreads : sched::Backend::kCoroutine;
  o.interrupt = &interrupted();
  o.partition = partition_from(a.part);
  o.check_determinism = a.check_determinism;
  o.progress = progress_printer("explore " + sc.name, sched::strategy_proves(o.strategy.kind));
  const std::string out = a.out.empty() ? "racelab-out/" + sc.name : a.out;
  // --stateless asks for the split's search: nothing to say then.
  if (const std::string note =
          split_note(o.strategy, o.partition, a.part,
                     fmt::format("{}'s search", sched::strategy_info(o.strategy.kind).name));
      !note.empty())
    fmt::print(stderr, "{}\n", note);

  if (!sc.live && (!a.torch.empty() || sc.profile != model::kDefaultTorch)) {
    const model::TorchProfile& p = model::torch_profile(sc.profile);
    fmt::print("torch {}: profile {} ({}; {})\n", sc.profile, p.name, p.description, p.file);
  }
  results::ScenarioRun run = run::run_scenario(sc, o);
  clear_progress();
  const report::ExploreOutput written = report::write_explore_files(run, out);

  // Each finding from the run, with the schedule and replay command the writer says it wrote.
  for (std::size_t i = 0; i < run.result.found.size(); ++i) {
    const sched::FoundKind& f = run.result.found[i];
    fmt::print("{} ({}execution {}, {} preemption(s)): {}\n", f.finding.kind,
               sched::kinds::is_failure(f.finding.kind) ? "" : "evidence; ", f.execution,
               f.preemptions, report::message_text(f.finding));
    fmt::print("  replay: {}\n", written.found.at(i).replay);
  }
  if (run.result.found.empty()) fmt::print("{}\n", paint("no findings", Colour::kGreen));
  if (a.check_determinism) {
    fmt::print("determinism: {} schedule(s) re-executed, {}\n", run.result.determinism_checked,
               run.result.determinism_failures.empty() ? paint("identical traces", Colour::kGreen)
                                                       : paint("DIFFERENT", Colour::kRed));
    for (const auto& d : run.result.determinism_failures) fmt::print("  {}\n", d);
  }
  const int code = results::explore_exit_code(run);
  if (run.has_expectations()) {
    // The suite's verdict words; where explore's exit code differs from the suite's (a failure
    // kind the scenario expects: explore exits 1 on any failure found), the same line says why.
    const results::Outcome v = run.verdict();
    const std::string word = verdict_word(run);
    switch (v) {
      case results::Outcome::kPass:
        fmt::print("{}: expectations hold{}\n", word,
                   code == kExitFound
                       ? fmt::format(" (exit 1: explore exits 1 when it finds a failure, here {}; "
                                     "racelab suite passes this scenario, exit 0)",
                                     fmt::join(run.failures(), ", "))
                       : "");
        break;
      case results::Outcome::kFail:
        fmt::print("{}: expectations do not hold: {}\n", word, run.verdict_reason());
        break;
      case results::Outcome::kInconclusive:
      case results::Outcome::kPending:
      case results::Outcome::kSkipped:  // a model scenario always runs
        fmt::print("{}: expectations {}\n", word, run.verdict_reason());
        break;
    }
  }
  print_stopped_early(run.result.stop == sched::StopReason::kInterrupted,
                      run.result.stop == sched::StopReason::kTimeLimit);
  {
    const std::filesystem::path dir(out);
    fmt::print("wrote {}, {}{}\n", (dir / "report.json").lexically_normal().string(),
               (dir / "report.html").lexically_normal().string(),
               run.result.found.empty()
                   ? ""
                   : fmt::format(" and {} schedule(s) in {}", run.result.found.size(),
                                 report::schedules_dir(dir).lexically_normal().string()));
  }
  if (const std::string line = run.interleavings(); !line.empty()) fmt::print("{}\n", line);
  fmt::print("{}; {:.2f} s ({:.0f} executions/s)\n", run.coverage(), run.result.seconds,
             run.result.seconds > 0
                 ? static_cast<double>(run.result.executions) / run.result.seconds
                 : 0.0);
  return code;
}

}  // namespace

void add_explore(CLI::App& app, Runner& run) {
  auto args = std::make_shared<ExploreArgs>();
  auto* cmd = app.add_subcommand("explore", "Explore the interleavings of one scenario");
  cmd->add_option("scenario", args->scenario, "scenario file (TOML)")->required();
  enum_option(cmd, "--strategy", args->strategy, sched::strategy_choices(),
              std::string(sched::strategy_names()) + " (default: the scenario's [explore])");
  cmd->add_option("--seed", args->seed, "seed of " + sched::seeded_strategy_names())
      ->check(integer_check(0));
  cmd->add_option("--iterations", args->iterations, "executions to run (dfs: an upper bound)")
      ->check(integer_check(1));
  cmd->add_option("--depth", args->depth, "pct depth (bug depth to target)")
      ->check(integer_check(1, 64));
  cmd->add_option("--max-preemptions", args->max_preemptions,
                  "dfs preemption bound (dpor: unbounded unless given)")
      ->check(integer_check(0, 64));
  // Each strategy's own options, from its row (src/sched/strategies/factory.cc).
  for (const sched::StrategyInfo& info : sched::strategy_table()) {
    for (const sched::StrategyOption& opt : info.options) {
      if (opt.number)
        cmd->add_option(opt.flag, args->strategy_numbers[opt.flag], opt.help);
      else
        cmd->add_flag(opt.flag, args->strategy_flags[opt.flag], opt.help);
    }
  }
  cmd->add_option("--torch", args->torch,
                  "torch version to explore under instead of the scenario's [torch] profile (a "
                  "profile, data/profiles/, or a release one covers): does upgrading fix it?");
  cmd->add_option("--time-limit", args->time_limit,
                  "stop after this many seconds, keeping results (a dfs search it cuts short is "
                  "inconclusive)")
      ->check(seconds_check());
  cmd->add_option("--out", args->out, "output directory (default: racelab-out/<scenario name>)");
  add_partition_options(cmd, args->part);
  cmd->add_flag("--check-determinism", args->check_determinism,
                "re-execute every finding's schedule and compare the traces step by step (on by "
                "default in suite)");
  cmd->add_flag("--no-shrink", args->no_shrink,
                "keep schedules as found instead of shrinking them");
  cmd->add_option("--backend", args->backend, "coroutine (fast) | threads (one OS thread each)")
      ->check(one_of({"coroutine", "threads"}));
  cmd->callback([&run, args] { run = [args] { return run_explore(*args); }; });
}

}  // namespace racelab::cli
