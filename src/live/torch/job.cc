// racelab live torch's run (workload.h, make_job): free of LibTorch, built with or without it.
#include <fmt/format.h>

#include "live/torch/workload.h"
#include "sched/schedule.h"
#include "util/errors.h"

namespace racelab::live::torch_workload {

Job make_job(Config cfg, const ShapeOptions& shape, const std::string& replay,
             std::optional<sched::Schedule> recorded,
             const std::function<std::unique_ptr<sched::Strategy>()>& search) {
  Job job;
  job.run = prepare(replay, std::move(recorded), sched::kLiveTorchSubject, search,
                    [&](const sched::Schedule* schedule) -> std::unique_ptr<Subject> {
                      if (schedule == nullptr) {
                        apply_shape(cfg, shape);
                        return make_drafters(cfg);  // validates: InputError for bad parameters
                      }
                      cfg = from_config(schedule->live_configuration);
                      try {
                        return make_drafters(cfg);
                      } catch (const InputError& e) {
                        throw InputError(fmt::format("{}: recorded with {} drafter(s) on {}: {}",
                                                     replay, cfg.drafters, cfg.device, e.what()));
                      }
                    });
  JobInfo& info = job.info;
  info.subject = sched::kLiveTorchSubject;
  info.command = "live torch";
  info.parameters = to_config(cfg);
  info.build = build_description();
  info.hash = job.run.subject->content_hash();
  info.stuck_in = "LibTorch";
  job.banner =
      fmt::format("live torch: {} drafter(s) on {}, warmup {}, attention {}, {}; {}", cfg.drafters,
                  cfg.device, cfg.warmup, cfg.attention, job.run.strategy->describe(), info.build);
  return job;
}

}  // namespace racelab::live::torch_workload
