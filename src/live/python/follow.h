#pragma once
// Following a model schedule on a live Python program (racelab live python --follow): the model
// names its threads and operations in its own words ("drafter 0.1", "submit backward to
// autograd 0"); the program under the bridge in its own ("drafter 1", "backward"). An
// interposition table's "follow" section says how one maps onto the other, so it sits with the
// tables, beside the bridge; sched::FollowStrategy then forces the mapped steps on the live run
// without knowing where they came from.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sched/schedule.h"
#include "sched/strategies/strategies.h"

namespace racelab::live::python {

// Translates a model schedule's steps onto a live program's names: `mapping` is the "follow"
// section of an interposition table, {"threads": [{"model": REGEX, "live": FORMAT}],
// "ops": [{"model": TEXT or PREFIX*, "live": TEXT, "hand_off": BOOL}]}. Steps whose operation has
// no live counterpart are left out, and so are steps of threads no "threads" entry matches (the
// model's autograd workers, which are foreign threads live). A hand-off to another thread moves
// to just before that thread's next model step. Throws InputError for a malformed mapping, naming
// `origin`.
std::vector<sched::FollowStep> follow_steps(const std::vector<sched::ReplayStep>& model,
                                            const nlohmann::json& mapping,
                                            const std::string& origin);

// racelab live python --follow SCHEDULE: the model schedule read from `path` mapped onto
// the live program through the "follow" section of the interposition table `interpose` (a name or
// a file, interposition_table), and how many steps the model schedule had, for the message.
// InputError for a live schedule (those replay with --replay), a table without a "follow"
// section, or a schedule none of whose steps maps onto a live operation.
struct Following {
  std::vector<sched::FollowStep> steps;
  std::size_t model_steps = 0;
};
Following follow_schedule(const sched::Schedule& model, const std::string& path,
                          const std::string& interpose);
// The same from the schedule read and the table's text (`interpose` names it in messages).
Following follow_schedule(const sched::Schedule& model, const std::string& path,
                          const std::string& table, const std::string& interpose);

}  // namespace racelab::live::python
