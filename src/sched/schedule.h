#pragma once
// Schedule files: versioned JSON recording one execution so that it can be replayed exactly.
//
//   { "format": "racelab-schedule", "version": 1, "racelab_version": "0.1.0",
//     "subject": {"name", "hash", "path"}, "strategy": {"name", "description", "seed",
//     "execution", "parameters"}, "finding": {"kind", "message"}, "preemptions": 2,
//     "steps": [["drafter 0.0", "lock compile_lock"], ...] }
//
// docs/schedules.md is the reference. Readers reject any other format or version with a clear
// message; bump kScheduleVersion whenever the meaning of a field or of an operation's text changes.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "sched/engine.h"
#include "sched/strategies/strategies.h"

namespace racelab::sched {

inline constexpr int kScheduleVersion = 1;
inline constexpr const char* kScheduleFormat = "racelab-schedule";

struct Schedule {
  std::string racelab_version;
  std::string subject_name;
  std::string subject_hash;
  std::string subject_path;  // the scenario file it was recorded from, when there is one
  std::string strategy_name;
  std::string strategy_description;
  std::uint64_t seed = 0;
  std::uint64_t execution = 0;
  nlohmann::json parameters = nlohmann::json::object();
  std::string finding_kind;  // empty: the schedule records an execution without finding
  std::string finding_message;
  std::uint64_t preemptions = 0;
  std::vector<ReplayStep> steps;
};

// The steps of an execution as a schedule records them.
std::vector<ReplayStep> replay_steps(const Execution& exec);

// What a schedule's header says about where its execution came from: the subject that ran and the
// strategy that chose it. Each report writer fills it from its own run (report.cc for scenarios,
// live_report.cc for live subjects); the rest of the header comes from the execution.
struct ScheduleSource {
  std::string subject_name;
  std::string subject_hash;
  std::string subject_path;  // the scenario file, when there is one ("" for a live subject)
  std::string strategy_name;
  std::string strategy_description;
  std::uint64_t seed = 0;
  nlohmann::json parameters = nlohmann::json::object();
};

// The one conversion of a result into a schedule, model and live alike: `source`'s header, this
// racelab's version, execution index `execution` of the search, the finding the schedule
// reproduces (nullptr: none, an empty kind), the execution's preemptions and its steps.
Schedule make_schedule(const ScheduleSource& source, std::uint64_t execution,
                       const Finding* finding, std::uint64_t preemptions,
                       std::vector<ReplayStep> steps);

std::string schedule_to_json(const Schedule& s);
// Throws InputError "<origin>: <key>: <problem>" for anything malformed.
Schedule parse_schedule(std::string_view text, const std::string& origin);
Schedule read_schedule(const std::string& path);

// Runs `subject` once under `replay`; a divergence becomes an InputError "<origin>: diverged at
// step k: expected …, got …" (a schedule that does not fit the subject is bad input).
ExecutionResult run_replay(Subject& subject, ReplayStrategy& replay, const std::string& origin);

}  // namespace racelab::sched
