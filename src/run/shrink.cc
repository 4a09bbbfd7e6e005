// racelab shrink (shrink.h).
#include "run/shrink.h"

#include <fmt/format.h>

#include "model/pipeline.h"
#include "model/suite.h"
#include "report/cli.h"
#include "report/schedule_file.h"
#include "sched/schedule.h"
#include "sched/shrink.h"
#include "util/errors.h"
#include "util/files.h"

namespace racelab::run {

using report::expect_file;
using report::FileKind;
using report::read_schedule;
using report::schedule_to_json;

ShrinkSummary shrink_schedule(const std::string& schedule, const std::string& out,
                              const std::string& scenario) {
  expect_file(schedule, FileKind::kSchedule, "shrink SCHEDULE");
  const sched::Schedule s = read_schedule(schedule);
  if (s.finding_kind.empty())
    throw InputError(schedule + ": finding.kind: empty; nothing to keep while shrinking");
  const model::Scenario sc = model::scenario_for_schedule(s, schedule, scenario);
  model::PipelineModel model(sc);
  sched::ReplayStrategy replay(s.steps, sched::OnDivergence::kFail);
  const sched::ExecutionResult result = sched::run_replay(model, replay, schedule);
  if (!result.found(s.finding_kind)) {
    throw InputError(
        fmt::format("{}: does not reproduce {}; nothing to shrink", schedule, s.finding_kind));
  }
  const sched::ShrinkResult shrunk = sched::shrink(model, result.choices, s.finding_kind);
  // The finding as the shrunk execution words it (its last of the kind; shrinking keeps the kind).
  sched::Finding finding{.kind = s.finding_kind, .message = s.finding_message};
  for (const auto& f : shrunk.result.findings) {
    if (f.kind == s.finding_kind) finding.message = f.message;
  }
  const sched::ScheduleSource source{.subject_name = s.subject_name,
                                     .subject_hash = s.subject_hash,
                                     .subject_path = absolute_path(sc.path),
                                     .strategy_name = s.strategy_name,
                                     .strategy_description = s.strategy_description,
                                     .seed = s.seed,
                                     .parameters = s.parameters,
                                     .live_configuration = s.live_configuration};
  write_file_atomic(out, schedule_to_json(sched::make_schedule(
                             source, s.execution, &finding, shrunk.result.preemptions,
                             sched::replay_steps(*shrunk.result.exec))));
  return {result.preemptions, shrunk.result.preemptions, result.exec->steps().size(),
          shrunk.result.exec->steps().size(), shrunk.attempts};
}

}  // namespace racelab::run
