// racelab live python's run (bridge.h, make_job): plain C++ over the bridge's functions, built
// with or without the interpreter.
#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "live/python/bridge.h"
#include "sched/schedule.h"
#include "util/errors.h"
#include "util/files.h"

namespace racelab::live::python {

live::Job make_job(Job& job, const std::string& replay, std::optional<sched::Schedule> recorded,
                   const std::function<std::unique_ptr<sched::Strategy>()>& search) {
  live::Job out;
  const std::string as_given = job.script;  // the banner shows the script as the user wrote it
  VersionCheck versions;
  out.run = prepare(
      replay, std::move(recorded), sched::kLivePythonSubject, search,
      [&](const sched::Schedule* schedule) {
        if (schedule == nullptr) {
          // Its schedules record the script's absolute path: a replay works from any directory.
          if (!job.script.empty()) job.script = absolute_path(job.script);
          return make_subject(job, "", &versions);
        }
        // The recorded job, its environment (--python) included; the policy is this run's.
        const bool refuse = job.refuse_unverified;
        job = job_from_config(schedule->live_configuration);
        job.refuse_unverified = refuse;
        // Older schedules record the path as given, relative to where racelab ran.
        const std::string as_recorded = job.script;
        if (as_recorded.empty())
          throw InputError(
              fmt::format("{}: script parameters: the schedule records no script to run", replay));
        job.script = recorded_path(as_recorded, replay);
        std::error_code ec;
        if (!std::filesystem::exists(job.script, ec))
          throw InputError(fmt::format(
              "{}: recorded with script {}, which does not exist here{}", replay, as_recorded,
              std::filesystem::path(as_recorded).is_absolute()
                  ? ""
                  : " (nor under the schedule file's directory or its parents)"));
        return make_subject(job, as_recorded, &versions);
      });
  JobInfo& info = out.info;
  info.subject = sched::kLivePythonSubject;
  info.command = "live python";
  info.parameters = job_config(job);
  info.build = build_description();
  if (!versions.found.torch.empty()) info.build += fmt::format(", torch {}", versions.found.torch);
  info.versions = versions.json();
  info.outside_verified = versions.outside;
  info.hash = out.run.subject->content_hash();
  info.stuck_in = "Python";
  info.on_hang = [](const std::filesystem::path& dir) {
    dump_stacks((dir / "stacks.txt").string());
  };
  out.banner = fmt::format("live python: {} (interposition {}), {}; {}",
                           replay.empty() && !as_given.empty() ? as_given : job.script,
                           job.interpose, out.run.strategy->describe(), info.build);
  out.arm = [](const std::string& dir) { arm_crash_report(dir); };
  out.exit_process = true;
  return out;
}

}  // namespace racelab::live::python
