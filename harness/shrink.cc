// racelab shrink SCHEDULE -o OUT: fewer preemptions, same finding.
#include "run/shrink.h"

#include <fmt/format.h>

#include "command.h"
#include "report/schedule_paths.h"
#include "util/errors.h"

namespace racelab::cli {

namespace {

struct ShrinkArgs {
  std::string schedule;
  std::string out;
  std::string scenario;
};

int run_shrink(const ShrinkArgs& a) {
  const run::ShrinkSummary got = run::shrink_schedule(a.schedule, a.out, a.scenario);
  fmt::print("{}: {} -> {} preemptions, {} -> {} steps ({} attempts)\n", a.out,
             got.preemptions_before, got.preemptions_after, got.steps_before, got.steps_after,
             got.attempts);
  fmt::print("replay: {}\n", report::replay_command(a.out));
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
