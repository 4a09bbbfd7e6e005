#include "results/live_case_run.h"

#include "util/spawn.h"

namespace racelab::results {

std::string LiveCaseRun::command() const {
  return argv.empty() && !recorded_command.empty() ? recorded_command : shell_line(argv);
}

}  // namespace racelab::results
