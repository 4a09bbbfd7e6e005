// racelab replay SCHEDULE: re-execute a recorded schedule, checking every step.
// Exit 1 when the recorded finding reproduces and is a failure kind, or when every step matched but
// the schedule ended before its recorded finding happened (a file cut short), 0 when the execution
// completes without it (after a fix) or it is evidence, 2 on divergence from the recorded scenario
// (unless --on-divergence random) or on a file that is not a schedule. With --scenario FIXED.toml
// of other content it replays the interleaving against the fix as far as it applies
// (src/model/suite.h). A live schedule replays with the configuration its header records:
// --scenario, --seed, --trace and --on-divergence, which only a model schedule takes, are refused
// there (exit 2).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <filesystem>
#include <string>
#include <vector>

#include "command.h"
#include "live/job.h"
#include "live_print.h"
#include "model/pipeline.h"
#include "model/suite.h"
#include "report/cli.h"
#include "report/html.h"
#include "report/report.h"
#include "report/schedule_file.h"
#include "sched/schedule.h"
#include "util/errors.h"
#include "util/files.h"

namespace racelab::cli {

namespace {

struct ReplayArgs {
  std::string schedule;
  std::string on_divergence;  // empty: fail against the recording, random against another
  std::string scenario;
  std::uint64_t seed = 1;
  bool trace = false;
  std::string out;
  std::vector<std::string> model_only;  // the options given that only a model schedule takes
};

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
    const std::string out = !a.out.empty() ? a.out : "racelab-out/" + s.subject_name + "-replay";
    live::Job job = live::replay_job(s, a.schedule);
    return livecmd::print_run(live::replay_options(a.schedule, out), job);
  }
  const model::ReplayRun run =
      model::replay_schedule(s, {a.schedule, a.scenario, a.on_divergence, a.seed});
  if (run.other_scenario) {
    fmt::print(
        "replaying {} ({} of scenario \"{}\") against {}: another scenario (hash {}, "
        "recorded {})\n",
        a.schedule, s.finding_kind.empty() ? "an execution" : s.finding_kind, s.subject_name,
        run.scenario.path, run.scenario.hash, s.subject_hash);
  }
  if (a.trace && run.result) fmt::print("{}", run.result->trace_text());
  if (!a.out.empty() && run.result) {
    fmt::print("report: {}\n", report::write_replay_page(a.out, a.schedule, *run.result, run.kind,
                                                         run.reproduced()));
  }
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
      cmd->add_option("--on-divergence", args->on_divergence,
                      "fail | random: what a divergence does (default: fail, exit 2, against the "
                      "recorded scenario; random against another --scenario)")
          ->check(one_of({"fail", "random"}));
  auto* scenario =
      cmd->add_option("--scenario", args->scenario,
                      "the scenario file: where it moved, or another one (a fix) to replay the "
                      "interleaving against");
  auto* seed =
      cmd->add_option("--seed", args->seed, "seed of the random strategy after a divergence")
          ->check(integer_check(0));
  auto* trace = cmd->add_flag("--trace", args->trace, "print every step");
  cmd->add_option("--out", args->out,
                  "write DIR/report.html: the findings, the wait-for cycle and the interleaving");
  // A live schedule replays with its recorded configuration: these would be ignored there.
  const std::array<const CLI::Option*, 4> model_only{on_divergence, scenario, seed, trace};
  cmd->callback([&run, args, model_only] {
    for (const CLI::Option* o : model_only)
      if (o->count() > 0) args->model_only.push_back(o->get_name());
    run = [args] { return replay_command(*args); };
  });
}

}  // namespace racelab::cli
