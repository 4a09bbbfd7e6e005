#pragma once
// Where racelab writes a schedule file, and the command that replays one: the one naming function
// for every command that writes schedules (explore, suite, merge, replay against a fix, the live
// search). Results carry the paths they got from here, and printers print those, never a path
// rebuilt by hand.
//
// The two layouts are kept as they are (users' CI scripts and the README name them):
//   a scenario's finding   <out>/schedules/<scenario>.<kind>.json
//   a live run's execution  <out>/schedule-<kind>.json, or schedule-run.json for one with no
//   failure
#include <filesystem>
#include <string>
#include <string_view>

namespace racelab::report {

struct ScheduleName {
  enum class Layout { kScenario, kLive };
  Layout layout = Layout::kScenario;
  std::string subject;  // the scenario's name (kScenario); unused for kLive
  std::string kind;     // the finding's kind; "" (kLive only) names a run with no failure
};

// "<out>/schedules": the directory a scenario's schedules go to (explore and suite print it).
std::filesystem::path schedules_dir(const std::filesystem::path& out);

// The schedule file `name` under `out` (not created).
std::filesystem::path schedule_path(const std::filesystem::path& out, const ScheduleName& name);

// The command that replays a schedule file: "racelab replay PATH" for a model schedule, or, given
// the live command that recorded it ("live python", "live torch"), "racelab live python --replay
// PATH".
std::string replay_command(std::string_view schedule, std::string_view live_command = "");

}  // namespace racelab::report
