// racelab replay SCHEDULE: re-execute a recorded schedule, checking every step.
// Exit 1 when the recorded finding reproduces and is a failure kind, or when every step matched but
// the schedule ended before its recorded finding happened (a file cut short), 0 when the execution
// completes without it or it is evidence, 2 on divergence from the recorded scenario (unless
// --on-divergence random) or on a file that is not a schedule. With --scenario FIXED.toml of other
// content it keeps the recorded steps that still apply and explores every continuation of them
// with dpor (src/run/replay.h): 0 when no continuation reaches the finding, 1 when one does (its
// schedule written) or when the search was cut short (inconclusive). A live schedule replays with
// the configuration its header records: the options only a model schedule takes are refused there
// (exit 2).
#include "run/replay.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "command.h"
#include "executables.h"
#include "live_print.h"
#include "model/pipeline.h"
#include "model/profile.h"
#include "report/cli.h"
#include "report/report.h"
#include "report/schedule_file.h"
#include "run/live_job.h"
#include "sched/schedule.h"
#include "transformers.h"
#include "util/errors.h"
#include "util/files.h"

namespace racelab::cli {

namespace {

struct ReplayArgs {
  std::string schedule;
  std::optional<run::Divergence> on_divergence;  // nullopt: fail against the recording, search
                                                 // on against another
  std::string scenario;
  std::string torch;  // --torch: the torch version to replay under (does upgrading fix it?)
  std::optional<std::uint64_t> seed;
  std::optional<std::uint64_t> iterations;  // against a fix: the search's execution cap
  double time_limit = 0;
  bool trace = false;
  std::string out;
  std::vector<std::string> model_only;  // the options given that only a model schedule takes
};

// Against a fix: how far the interleaving applied, every kind a continuation reached (each with
// its schedule, written as explore writes them), the search's coverage and the answer.
int print_against_fix(const ReplayArgs& a, const run::ReplayRun& run) {
  if (!run.continuations) {
    fmt::print("{}\n", paint(run.outcome(), Colour::kYellow));
    return run.exit_code();
  }
  const results::ScenarioRun& check = *run.continuations;
  fmt::print("{}; exploring every continuation of them with dpor\n", run.applied());
  const sched::FoundKind* witness = run.witness();
  std::string witness_path;
  for (const run::WrittenContinuation& w :
       run::write_continuations(run, run::continuations_dir(run, a.out))) {
    const sched::FoundKind& f = *w.found;
    if (&f == witness) witness_path = w.schedule;
    fmt::print("{} ({}continuation {}): {}\n", f.finding.kind,
               sched::kinds::is_failure(f.finding.kind) ? "" : "evidence; ", f.execution + 1,
               report::message_text(f.finding));
    fmt::print("  replay: {}\n", w.replay);
  }
  // The page and the trace show the witness, else the replayed execution (its first
  // continuation): ReplayRun::shown.
  if (a.trace && run.shown() != nullptr) fmt::print("{}", run.shown()->trace_text());
  if (!a.out.empty()) {
    const std::string written = run::write_replay_page(run, a.schedule, a.out);
    if (!written.empty()) fmt::print("wrote {}\n", written);
  }
  print_stopped_early(check.result.interrupted(), check.result.time_limit());
  if (witness == nullptr) fmt::print("{}\n", check.coverage());
  const run::ReplayRun::Answer answer = run.answer();
  fmt::print("{}\n", paint(run.outcome(witness_path),
                           answer == run::ReplayRun::Answer::kGone           ? Colour::kGreen
                           : answer == run::ReplayRun::Answer::kInconclusive ? Colour::kYellow
                                                                             : Colour::kRed));
  return run.exit_code();
}

int replay_command(const ReplayArgs& a) {
  report::expect_file(a.schedule, report::FileKind::kSchedule, "replay SCHEDULE");
  const sched::Schedule s = report::read_schedule(a.schedule);
  if (sched::is_live_subject(s.subject_name)) {
    // A live schedule replays on real threads with the configuration its header records (the
    // LibTorch workload's; a Python script's arguments and table), as racelab live torch |
    // python --replay would replay it.
    if (!a.model_only.empty())
      throw InputError(
          fmt::format("{}: a schedule of racelab {}; {} appl{} to model schedules only", a.schedule,
                      s.subject_name == sched::kLivePythonSubject ? "live python" : "live torch",
                      fmt::join(a.model_only, ", "), a.model_only.size() == 1 ? "ies" : "y"));
    // The subject runs in the executable that has it (executables.h): racelab-python or -torch.
    run_with(s.subject_name == sched::kLivePythonSubject ? LiveComponent::kPython
                                                         : LiveComponent::kTorch);
    const std::string out = !a.out.empty() ? a.out : "racelab-out/" + s.subject_name + "-replay";
    live::Job job = run::replay_job(s, a.schedule);
    return livecmd::print_run(run::replay_options(a.schedule, out), job);
  }
  run::ReplayRequest request{.schedule_path = a.schedule,
                             .scenario_path = a.scenario,
                             .torch = a.torch,
                             .on_divergence = a.on_divergence,
                             .seed = a.seed,
                             .iterations = a.iterations,
                             .time_limit_s = a.time_limit,
                             .interrupt = &interrupted()};
  request.progress = progress_printer("replay: continuations", /*open_ended=*/true);
  const run::ReplayRun run = run::replay_schedule(s, request);
  clear_progress();
  if (run.other_scenario) {
    const std::string under = a.torch.empty() ? ""
                                              : fmt::format(" under torch {} (profile {})", a.torch,
                                                            model::torch_profile(a.torch).name);
    fmt::print(
        "replaying {} ({} of scenario \"{}\") against {}{}: another scenario (hash {}, "
        "recorded {})\n",
        a.schedule, s.finding_kind.empty() ? "an execution" : s.finding_kind, s.subject_name,
        run.scenario.path, under, run.scenario.hash, s.subject_hash);
    return print_against_fix(a, run);
  }
  if (a.trace && run.result) fmt::print("{}", run.result->trace_text());
  if (!a.out.empty() && run.result)
    fmt::print("wrote {}\n", run::write_replay_page(run, a.schedule, a.out));
  if (run.result) {
    for (const auto* f : report::ordered(run.result->findings)) {
      fmt::print("{}: {}{}\n", f->kind, report::message_text(*f),
                 sched::kinds::is_failure(f->kind) ? "" : " (evidence)");
    }
  }
  fmt::print("{}\n",
             paint(run.outcome(), run.exit_code() == kExitOk ? Colour::kGreen : Colour::kRed));
  return run.exit_code();
}

}  // namespace

void add_replay(CLI::App& app, Runner& run) {
  auto args = std::make_shared<ReplayArgs>();
  auto* cmd = app.add_subcommand("replay", "Re-execute a schedule file, checking every step");
  cmd->add_option("schedule", args->schedule, "schedule file (JSON)")->required();
  auto* on_divergence =
      enum_option(cmd, "--on-divergence", args->on_divergence, run::divergence_table(),
                  "fail | random: what a divergence from the recorded scenario does (default: "
                  "fail, exit 2); against another --scenario, fail stops there instead of "
                  "exploring every continuation");
  auto* scenario =
      cmd->add_option("--scenario", args->scenario,
                      "the scenario file: where it moved, or another one (a fix) to replay the "
                      "interleaving against");
  auto* torch = cmd->add_option(
      "--torch", args->torch,
      "a torch version (a profile, data/profiles/): replay the interleaving under it and explore "
      "every continuation (does upgrading fix it?)");
  auto* seed = cmd->add_option("--seed", args->seed,
                               "seed of the random strategy after a divergence "
                               "(--on-divergence random)")
                   ->check(integer_check(0));
  auto* iterations =
      cmd->add_option("--iterations", args->iterations,
                      "against another --scenario: continuations to explore at most (default: "
                      "the scenario's [explore] iterations)")
          ->check(integer_check(1));
  auto* time_limit = cmd->add_option("--time-limit", args->time_limit,
                                     "against another --scenario: stop exploring continuations "
                                     "after this many seconds (inconclusive)")
                         ->check(seconds_check());
  auto* trace = cmd->add_flag("--trace", args->trace, "print every step");
  cmd->add_option("--out", args->out,
                  "write DIR/report.html: the findings, the wait-for cycle and the interleaving");
  // A live schedule replays with its recorded configuration: these would be ignored there.
  const std::array<const CLI::Option*, 7> model_only{on_divergence, scenario,   torch,     seed,
                                                     trace,         iterations, time_limit};
  cmd->callback([&run, args, model_only] {
    for (const CLI::Option* o : model_only)
      if (o->count() > 0) args->model_only.push_back(o->get_name());
    run = [args] { return replay_command(*args); };
  });
}

}  // namespace racelab::cli
