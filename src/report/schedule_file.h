#pragma once
// A schedule's file (docs/schedules.md): the JSON text of a sched::Schedule, written and read
// here so that the scheduler core (src/sched) holds no JSON.
//
// The written bytes are a format: the same execution must give the same file, byte for byte, run
// after run and release after release within a version. So the writer fixes every key's order,
// and `strategy.parameters` is written in its keys' alphabetical order (a model schedule's
// depth, iterations, max_preemptions, shrunk; a live schedule's job configuration, whatever its
// keys). Readers refuse any format or version other than sched::kScheduleVersion with a clear
// message.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "sched/schedule.h"

namespace racelab::report {

std::string schedule_to_json(const sched::Schedule& s);
// Throws InputError "<origin>: <key>: <problem>" for anything malformed.
sched::Schedule parse_schedule(std::string_view text, const std::string& origin);
sched::Schedule read_schedule(const std::string& path);

// The one mapping of a live job's configuration to JSON and back: a report's "parameters" (in the
// subject's order) and a schedule's `strategy.parameters` (keys sorted, as written above). Numbers
// are integers (int64); a value of another kind is InputError "<at>.<key>: ...".
nlohmann::ordered_json subject_config_json(const sched::SubjectConfig& c);
sched::SubjectConfig subject_config_from_json(const nlohmann::json& object, const std::string& at);

}  // namespace racelab::report
