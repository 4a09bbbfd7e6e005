#include "live/job.h"

#include "live/python/bridge.h"
#include "live/torch/workload.h"
#include "report/live_report.h"
#include "sched/schedule.h"
#include "util/check.h"

namespace racelab::live {

Job replay_job(const sched::Schedule& schedule, const std::string& path) {
  RACELAB_CHECK(sched::is_live_subject(schedule.subject_name),
                "live::replay_job: {} records {}, not a live subject", path, schedule.subject_name);
  if (schedule.subject_name == sched::kLivePythonSubject) {
    python::Job job;
    return python::make_job(job, path, schedule, nullptr);
  }
  return torch_workload::make_job(torch_workload::Config{}, torch_workload::ShapeOptions{}, path,
                                  schedule, nullptr);
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
  Outcome o =
      search(so, job.info, *job.run.subject, *job.run.strategy, job.run.replaying, stop, progress);
  report::LiveSchedules schedules =
      report::write_outputs(so, job.info, o, desc, job.run.strategy->classes());
  results::Verdict verdict = judge(so, o);
  const int code = exit_code(verdict);
  const bool end_process = job.exit_process || (o.kept.failure && o.kept.failure->hung);
  return JobRun{std::move(o),    std::move(schedules.failure), std::move(schedules.other),
                std::move(desc), std::move(verdict),           code,
                end_process};
}

}  // namespace racelab::live
