#include "run/live_job.h"

#include "live/python/bridge.h"
#include "live/torch/workload.h"
#include "report/live_report.h"
#include "sched/schedule.h"
#include "util/check.h"

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
  if (job.arm) job.arm(options.out);
  std::string desc = job.run.strategy->describe();
  SearchOptions so = options;
  if (job.run.replaying) so.recorded = job.run.recorded;
  Outcome o = live::search(so, job.info, *job.run.subject, *job.run.strategy, job.run.replaying,
                           stop, progress);
  report::LiveSchedules schedules =
      report::write_outputs(so, job.info, o, desc, job.run.strategy->classes());
  results::Verdict verdict = live::judge(so, o);
  const int code = live::exit_code(verdict);
  const bool end_process = job.exit_process || (o.kept.failure && o.kept.failure->hung);
  return JobRun{std::move(o),    std::move(schedules.failure), std::move(schedules.other),
                std::move(desc), std::move(verdict),           code,
                end_process};
}

}  // namespace racelab::run
