// racelab live python's run (bridge.h, make_job): plain C++ over the bridge's functions, built
// with or without the interpreter.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "live/python/bridge.h"
#include "sched/schedule.h"

namespace racelab::live::python {

live::Job make_job(Job& job, const std::string& replay, std::optional<sched::Schedule> recorded,
                   const std::function<std::unique_ptr<sched::Strategy>()>& search) {
  live::Job out;
  out.run = prepare(replay, std::move(recorded), sched::kLivePythonSubject, search,
                    [&](const sched::Schedule* schedule) {
                      if (schedule != nullptr) job = job_from_json(schedule->live_configuration);
                      return make_subject(job);
                    });
  JobInfo& info = out.info;
  info.subject = sched::kLivePythonSubject;
  info.command = "live python";
  info.parameters = nlohmann::ordered_json::parse(job_json(job));
  info.build = build_description();
  info.hash = out.run.subject->content_hash();
  info.stuck_in = "Python";
  info.on_hang = [](const std::filesystem::path& dir) {
    dump_stacks((dir / "stacks.txt").string());
  };
  out.banner = fmt::format("live python: {} (interposition {}), {}; {}", job.script, job.interpose,
                           out.run.strategy->describe(), info.build);
  out.arm = [](const std::string& dir) { arm_crash_report(dir); };
  out.exit_process = true;
  return out;
}

}  // namespace racelab::live::python
