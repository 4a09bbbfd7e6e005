#include "sched/schedule.h"

#include <fmt/format.h>

#include "racelab/version.h"
#include "util/errors.h"

namespace racelab::sched {

std::vector<ReplayStep> replay_steps(const Execution& exec) {
  std::vector<ReplayStep> out;
  out.reserve(exec.steps().size());
  for (const Step& s : exec.steps())
    out.push_back({exec.thread_name(s.thread), exec.describe(s.op)});
  return out;
}

Schedule make_schedule(const ScheduleSource& source, std::uint64_t execution,
                       const Finding* finding, std::uint64_t preemptions,
                       std::vector<ReplayStep> steps) {
  Schedule s;
  s.racelab_version = kVersion;
  s.subject_name = source.subject_name;
  s.subject_hash = source.subject_hash;
  s.subject_path = source.subject_path;
  s.strategy_name = source.strategy_name;
  s.strategy_description = source.strategy_description;
  s.seed = source.seed;
  s.execution = execution;
  s.parameters = source.parameters;
  s.live_configuration = source.live_configuration;
  if (finding != nullptr) {
    s.finding_kind = finding->kind;
    s.finding_message = finding->message;
  }
  s.preemptions = preemptions;
  s.steps = std::move(steps);
  return s;
}

ExecutionResult run_replay(Subject& subject, ReplayStrategy& replay, const std::string& origin) {
  try {
    return std::move(*run_execution(subject, replay, 0));
  } catch (const ReplayDivergence& e) {
    throw InputError(fmt::format("{}: {}", origin, e.what()));
  }
}

}  // namespace racelab::sched
