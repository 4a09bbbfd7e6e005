#include "run/live_job.h"

#include <fmt/format.h>

#include "live/python/bridge.h"
#include "live/split.h"
#include "live/torch/workload.h"
#include "report/live_report.h"
#include "sched/schedule.h"
#include "util/check.h"
#include "util/errors.h"

namespace racelab::run {

Job replay_job(const sched::Schedule& schedule, const std::string& path) {
  RACELAB_CHECK(sched::is_live_subject(schedule.subject_name),
                "run::replay_job: {} records {}, not a live subject", path, schedule.subject_name);
  if (schedule.subject_name == sched::kLivePythonSubject) {
    live::python::Job job;
    return live::python::make_job(job, path, schedule, nullptr);
  }
  return live::torch_workload::make_job(live::torch_workload::Config{},
                                        live::torch_workload::ShapeOptions{}, path, schedule,
                                        nullptr);
}

SearchOptions replay_options(const std::string& path, const std::string& out) {
  SearchOptions o;
  o.executions = 1;  // a replay runs its schedule once
  o.replay = path;
  o.out = out;
  return o;
}

JobRun run_job(const SearchOptions& options, Job& job, const std::function<bool()>& stop,
               const std::function<void(std::uint64_t, std::uint64_t)>& progress) {
  if (options.carried && options.carried->hash != job.info.hash)
    throw InputError(fmt::format(
        "--continue-from: the search was handed over by a run of another subject (content hash "
        "{}, now {}): start it again",
        options.carried->hash, job.info.hash));
  if (job.arm) job.arm(options.out);
  std::string desc = job.run.strategy->describe();
  SearchOptions so = options;
  if (job.run.replaying) so.recorded = job.run.recorded;
  std::optional<sched::Strategy::Classes> classes;
  Outcome o = [&] {
    if (so.jobs > 1 && !job.run.replaying) {  // over worker processes (live/split.h)
      live::SplitSearch split = live::search_split(so, job.info, *job.run.subject, stop, progress);
      classes = split.classes;
      desc = std::move(split.strategy);
      return std::move(split.outcome);
    }
    Outcome one = live::search(so, job.info, *job.run.subject, *job.run.strategy, job.run.replaying,
                               stop, progress);
    classes = job.run.strategy->classes();
    return one;
  }();
  std::vector<live::Found> found;
  if (so.all_findings) found = report::write_found(so, job.info, o, desc);
  std::optional<live::Handover> next =
      live::next_process(so, job.info, *job.run.strategy, o, found, stop && stop());
  report::LiveSchedules schedules = report::write_outputs(so, job.info, o, desc, classes, found);
  results::Verdict verdict = live::judge(so, o);
  const int code = live::exit_code(verdict);
  const bool end_process =
      job.exit_process || (o.kept.failure && o.kept.failure->hung) || o.kept.hand_over;
  return JobRun{std::move(o),
                std::move(schedules.failure),
                std::move(schedules.other),
                std::move(desc),
                std::move(verdict),
                code,
                end_process,
                std::move(found),
                std::move(next)};
}

}  // namespace racelab::run
