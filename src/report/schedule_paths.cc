#include "report/schedule_paths.h"

#include <fmt/format.h>

namespace racelab::report {

std::filesystem::path schedules_dir(const std::filesystem::path& out) { return out / "schedules"; }

std::filesystem::path schedule_path(const std::filesystem::path& out, const ScheduleName& name) {
  if (name.layout == ScheduleName::Layout::kLive)
    return out / fmt::format("schedule-{}.json", name.kind.empty() ? "run" : name.kind);
  return schedules_dir(out) / fmt::format("{}.{}.json", name.subject, name.kind);
}

std::string replay_command(std::string_view schedule, std::string_view live_command) {
  if (live_command.empty()) return fmt::format("racelab replay {}", schedule);
  return fmt::format("racelab {} --replay {}", live_command, schedule);
}

}  // namespace racelab::report
