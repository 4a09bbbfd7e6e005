// racelab check SCRIPT [-- ARGS]: the compile races and the allocator verdict of a script, per
// argument set (src/run/check.h does the work; this file parses and prints).
#include "run/check.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <csignal>
#include <filesystem>

#include "command.h"
#include "report/check_html.h"
#include "report/live_report.h"
#include "report/schedule_paths.h"
#include "sched/strategies/strategies.h"
#include "transformers.h"
#include "util/errors.h"
#include "util/files.h"
#include "util/spawn.h"
#include "util/text.h"

namespace racelab::cli {

namespace {

int check_command(results::CheckOptions o) {
  auto note = [](const std::string& line) {
    fmt::print("{}\n", paint(line, Colour::kDim));
    std::fflush(stdout);
  };
  // Ctrl-C, or SIGTERM from a job runner: the check stops after the step it is in (its child
  // stops too), writes what it has and says it is no verdict.
  std::signal(SIGTERM, on_interrupt_signal);
  o.interrupt = &interrupted();
  const results::CheckResult r = run::run_check(o, self_executable(), note);
  std::size_t width = 8, races_width = 13;
  // The torch or Python outside the table's verified range: one line (one interpreter for all).
  for (const auto& v : r.variants) {
    if (v.races.outside_verified.empty()) continue;
    fmt::print("{}\n", paint("warning: " + v.races.outside_verified, Colour::kYellow));
    break;
  }
  for (const auto& v : r.variants) {
    width = std::max(width, v.name.size());
    races_width = std::max(races_width, results::races_line(v).size());
  }
  races_width = std::min<std::size_t>(races_width, 72);
  fmt::print("\n{:<{}}  {:<12} {:<{}} {}\n", "variant", width, "verdict", "compile races",
             races_width, "memory");
  for (const auto& v : r.variants) {
    const results::Outcome outcome = v.verdict().outcome;
    const std::string word = results::outcome_word(outcome);
    const Colour colour = outcome == results::Outcome::kPass   ? Colour::kGreen
                          : outcome == results::Outcome::kFail ? Colour::kRed
                                                               : Colour::kYellow;
    fmt::print("{:<{}}  {} {:<{}} {}\n", v.name, width, paint(fmt::format("{:<12}", word), colour),
               results::races_line(v), races_width, results::memory_summary(v.memory));
  }
  // What a clean or proven race verdict does not cover (races/report.json: not_checked, and
  // proof/report.json: proof_covers).
  using RS = results::RaceVerdict::State;
  auto any_state = [&](RS s) {
    return std::any_of(r.variants.begin(), r.variants.end(),
                       [s](const results::VariantResult& v) { return v.races.state == s; });
  };
  if (any_state(RS::kClean) || any_state(RS::kProven))
    fmt::print("compile races: {}\n", report::kPythonNotChecked);
  for (const auto& v : r.variants)
    if (v.races.state == RS::kProven && !v.races.proof.covers.empty()) {
      fmt::print("compile races: {}\n", v.races.proof.covers);
      break;
    }
  for (const auto& v : r.variants) {
    if (v.races.state == RS::kClean || v.races.state == RS::kProven) continue;
    fmt::print("\n{}: {}\n", v.name, paint(results::race_summary(v.races), Colour::kRed));
    if (!v.races.message.empty()) fmt::print("  {}\n", v.races.message);
    if (!v.races.schedule.empty())
      fmt::print("  replay: {}\n", report::replay_command(v.races.schedule, "live python"));
  }
  // A variant whose memory did not settle, against one that did (alloc diff).
  for (const auto& v : r.variants) {
    if (v.memory.explanation.empty()) continue;
    fmt::print("\n{}: memory did not settle; against {}, whose did:\n", v.name, v.memory.against);
    for (const std::string& line : v.memory.explanation) fmt::print("  {}\n", line);
  }
  for (const auto& v : r.variants) {
    if (v.native.failed == 0) continue;
    fmt::print("\n{}: {}\n", v.name, paint(results::races_line(v), Colour::kRed));
    if (!v.native.message.empty()) fmt::print("  {}\n", first_line(v.native.message));
    fmt::print("  why control did not reach it: {}\n  log: {}\n", results::kNativeOnlyWhy,
               v.native.log);
  }
  for (const auto& v : r.variants) {
    if (v.memory.failure.empty()) continue;
    fmt::print("\n{}: the uncontrolled run failed, {}: {}\n  log: {}\n", v.name,
               paint(v.memory.ended, Colour::kRed), first_line(v.memory.failure), v.memory.log);
  }
  report::write_check_outputs(r, o);
  if (r.interrupted) {
    // As explore and live say it, then what was finished and what was not.
    fmt::print("\n");
    print_stopped_early(true, false);
    fmt::print("{}\n{}\n", paint(results::interrupted_line(r), Colour::kYellow),
               results::kInterruptedWhy);
  }
  const std::filesystem::path out(o.out);
  fmt::print("\nwrote {}, {} and each variant's reports in {} ({}{:.1f} s)\n",
             (out / "check.html").lexically_normal().string(),
             (out / "check.json").lexically_normal().string(), out.lexically_normal().string(),
             r.interrupted ? "partial: interrupted, " : "", r.seconds);
  return r.exit_code() == 0 ? kExitOk : kExitFound;
}

}  // namespace

void add_check(CLI::App& app, Runner& run) {
  auto o = std::make_shared<results::CheckOptions>();
  auto* cmd = app.add_subcommand(
      "check",
      "a script's compile races (under the scheduler) and its allocator verdict (one "
      "uncontrolled run), per argument set: did the warmup fix it?");
  cmd->add_option("script", o->script, "the Python script, run as __main__")->required();
  cmd->add_option("args", o->args, "its arguments (after --), common to every variant");
  cmd->add_option("--variant", o->variants,
                  "an argument set appended to ARGS, e.g. \"--warmup none\" (repeatable: the "
                  "variants side by side)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->allow_extra_args(false);
  cmd->add_option("--interpose", o->interpose,
                  "interposition table: torch-2.11, standin, none, or a JSON file")
      ->capture_default_str();
  cmd->add_option("--dict", o->dicts, "MODULE.ATTR: a dict cache (as live python)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->allow_extra_args(false);
  cmd->add_option("--lock", o->locks, "MODULE.ATTR: a lock to control (as live python)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->allow_extra_args(false);
  cmd->add_option("--point", o->points, "MODULE.FUNC: a scheduling point (as live python)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->allow_extra_args(false);
  cmd->add_option("--blocking", o->blocking, "MODULE.FUNC[=SERVED_BY] (as live python)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->allow_extra_args(false);
  add_live_python_options(cmd, o->python, "every run of the script (hunt, proof, native, memory)");
  // The hunt samples (a budget of executions); the proof after it is dpor's.
  auto sampling = sched::strategy_choices(
      [](const sched::StrategyInfo& info) { return info.live && !info.proves; });
  std::vector<std::string> words;
  for (const auto& [word, kind] : sampling) words.push_back(word);
  enum_option(cmd, "--strategy", o->strategy, std::move(sampling),
              "the hunt's strategy: " + fmt::format("{}", fmt::join(words, " | ")) +
                  " (random found the lazy deadlocks soonest: docs/performance.md)")
      ->default_str(sched::strategy_name(o->strategy));
  cmd->add_option("--seed", o->seed, "its seed")->capture_default_str()->check(integer_check(0));
  cmd->add_option("--executions", o->executions, "the hunt's budget of executions per variant")
      ->capture_default_str()
      ->check(integer_check(1, 1000000));
  cmd->add_flag("--no-prove{false}", o->prove,
                "the hunt alone: a clean variant is a sample, not a proof (no dpor run after it)");
  cmd->add_option("--proof-executions", o->proof_executions,
                  "the dpor proof's cap per variant: past it the variant is inconclusive")
      ->capture_default_str()
      ->check(integer_check(1, 100000000));
  cmd->add_option("--proof-jobs", o->proof_jobs,
                  "the dpor proof over N worker processes at once (0: one per core): the same "
                  "executions and verdict as one process, sooner (live --jobs, docs/live.md, "
                  "\"Many processes\")")
      ->capture_default_str()
      ->check(integer_check(0, 256));
  cmd->add_option("--native-runs", o->native_runs,
                  "uncontrolled runs of a variant whose races found nothing (clean, proven or cut "
                  "short): a failure they show fails it (seen natively, not reached under "
                  "control)")
      ->capture_default_str()
      ->check(integer_check(0, 1000));
  cmd->add_option("--hang-timeout", o->hang_timeout,
                  "seconds a controlled thread may stay in a real call")
      ->capture_default_str()
      ->check(seconds_check());
  cmd->add_option("--time-limit", o->time_limit,
                  "seconds for each run (the search; the capture run, past which it is a hang)")
      ->capture_default_str()
      ->check(seconds_check());
  cmd->add_flag("--no-memory{false}", o->memory, "races only: no allocator capture");
  cmd->add_option("--settle", o->settle,
                  "iterations allowed to allocate before growth counts (default: the warm phase "
                  "the capture shows, alloc report's rule)")
      ->check(integer_check(0));
  cmd->add_option("--out", o->out, "output directory (check.html, check.json, one per variant)")
      ->capture_default_str();
  cmd->callback([&run, o] { run = [o] { return check_command(*o); }; });
}

}  // namespace racelab::cli
