// racelab replay SCHEDULE: re-execute a recorded schedule, checking every step.
// Exit 1 when the recorded finding reproduces, 0 when the execution completes without it (after a
// fix), 2 on divergence (unless --on-divergence random) or on a schedule that does not belong to
// the scenario.
#include <fmt/format.h>

#include <filesystem>

#include "command.h"
#include "model/pipeline.h"
#include "model/suite.h"
#include "report/html.h"
#include "sched/schedule.h"
#include "util/errors.h"
#include "util/files.h"

namespace racelab::cli {

namespace {

struct ReplayArgs {
  std::string schedule;
  std::string on_divergence = "fail";
  std::string scenario;
  std::uint64_t seed = 1;
  bool trace = false;
  std::string out;
};

int replay_command(const ReplayArgs& a) {
  const sched::Schedule s = sched::read_schedule(a.schedule);
  if (s.subject_name == "live-torch") {
    // A schedule of the live workload: it replays on real threads, with its own parameters.
    return live_torch_replay(a.schedule, a.out.empty() ? "racelab-out/live-torch-replay" : a.out);
  }
  const model::Scenario sc = model::scenario_for_schedule(s, a.schedule, a.scenario);
  model::PipelineModel model(sc);
  const bool lenient = a.on_divergence == "random";
  sched::ReplayStrategy replay(s.steps,
                               lenient ? sched::OnDivergence::kRandom : sched::OnDivergence::kFail,
                               lenient ? sched::make_random(a.seed) : nullptr);
  const sched::ExecutionResult result = sched::run_replay(model, replay, a.schedule);
  if (a.trace) fmt::print("{}", result.trace_text());
  if (replay.diverged()) {
    fmt::print("diverged at step {}; continued under random(seed={})\n", *replay.diverged_at(),
               a.seed);
  }
  const std::string& kind = s.finding_kind;
  if (!a.out.empty()) {
    ensure_directory(a.out);
    const std::string page = (std::filesystem::path(a.out) / "report.html").string();
    write_file_atomic(
        page, report::replay_html(a.schedule, result, kind, !kind.empty() && result.found(kind)));
    fmt::print("report: {}\n", page);
  }
  for (const auto& f : result.findings()) {
    fmt::print("{}\n",
               f.message.rfind(f.kind + ":", 0) == 0 ? f.message : f.kind + ": " + f.message);
  }
  if (!kind.empty() && result.found(kind)) {
    fmt::print("reproduced {} in {} steps\n", kind, result.exec->steps().size());
    return kExitFound;
  }
  fmt::print("completed without {} ({} steps)\n", kind.empty() ? "findings" : kind,
             result.exec->steps().size());
  return result.findings().empty() ? kExitOk : kExitFound;
}

}  // namespace

void add_replay(CLI::App& app, Runner& run) {
  auto args = std::make_shared<ReplayArgs>();
  auto* cmd = app.add_subcommand("replay", "Re-execute a schedule file, checking every step");
  cmd->add_option("schedule", args->schedule, "schedule file (JSON)")->required();
  cmd->add_option("--on-divergence", args->on_divergence,
                  "fail (exit 2) | random (continue under a seeded random strategy)")
      ->check(CLI::IsMember({"fail", "random"}));
  cmd->add_option("--scenario", args->scenario, "the scenario file, when it moved since recording");
  cmd->add_option("--seed", args->seed, "seed for --on-divergence random");
  cmd->add_flag("--trace", args->trace, "print every step");
  cmd->add_option("--out", args->out,
                  "write DIR/report.html: the findings, the wait-for cycle and the interleaving");
  cmd->callback([&run, args] { run = [args] { return replay_command(*args); }; });
}

}  // namespace racelab::cli
