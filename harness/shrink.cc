// racelab shrink SCHEDULE -o OUT: fewer preemptions, same finding.
#include "sched/shrink.h"

#include <fmt/format.h>

#include "command.h"
#include "model/pipeline.h"
#include "model/suite.h"
#include "report/cli.h"
#include "report/schedule_file.h"
#include "sched/schedule.h"
#include "util/errors.h"
#include "util/files.h"

namespace racelab::cli {

namespace {

struct ShrinkArgs {
  std::string schedule;
  std::string out;
  std::string scenario;
};

int run_shrink(const ShrinkArgs& a) {
  report::expect_file(a.schedule, report::FileKind::kSchedule, "shrink SCHEDULE");
  sched::Schedule s = report::read_schedule(a.schedule);
  if (s.finding_kind.empty())
    throw InputError(a.schedule + ": finding.kind: empty; nothing to keep while shrinking");
  const model::Scenario sc = model::scenario_for_schedule(s, a.schedule, a.scenario);
  model::PipelineModel model(sc);
  sched::ReplayStrategy replay(s.steps, sched::OnDivergence::kFail);
  const sched::ExecutionResult result = sched::run_replay(model, replay, a.schedule);
  if (!result.found(s.finding_kind)) {
    throw InputError(
        fmt::format("{}: does not reproduce {}; nothing to shrink", a.schedule, s.finding_kind));
  }
  sched::ShrinkResult out = sched::shrink(model, result.choices(), s.finding_kind);
  s.steps = sched::replay_steps(*out.result.exec);
  s.preemptions = out.result.preemptions;
  for (const auto& f : out.result.findings()) {
    if (f.kind == s.finding_kind) s.finding_message = f.message;
  }
  write_file_atomic(a.out, report::schedule_to_json(s));
  fmt::print("{}: {} -> {} preemptions, {} -> {} steps ({} attempts)\n", a.out, result.preemptions,
             out.result.preemptions, result.exec->steps().size(), out.result.exec->steps().size(),
             out.attempts);
  fmt::print("replay: racelab replay {}\n", a.out);
  return kExitOk;
}

}  // namespace

void add_shrink(CLI::App& app, Runner& run) {
  auto args = std::make_shared<ShrinkArgs>();
  auto* cmd =
      app.add_subcommand("shrink", "Reduce the preemptions of a schedule, keeping its finding");
  cmd->add_option("schedule", args->schedule, "schedule file (JSON)")->required();
  cmd->add_option("-o,--out", args->out, "where to write the shrunk schedule")->required();
  cmd->add_option("--scenario", args->scenario, "the scenario file, when it moved since recording");
  cmd->callback([&run, args] { run = [args] { return run_shrink(*args); }; });
}

}  // namespace racelab::cli
