#include "live/job.h"

#include "live/python/bridge.h"
#include "live/torch/workload.h"
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

}  // namespace racelab::live
