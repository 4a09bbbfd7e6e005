#pragma once
// `racelab doctor`: what this machine offers racelab and, where it does not, why not. Its output is
// the first thing a user pastes into a bug report, so every line says what was checked and how.
#include <string>
#include <vector>

namespace racelab {

struct DoctorItem {
  std::string name;   // "cpus", "compiler", "tsan", "rr", ...
  bool ok = false;    // available for racelab to use
  std::string value;  // what was found, or why it is not usable
};

struct CommandOutput {
  int status = -1;   // exit status; -1 when the command could not run
  std::string text;  // stdout and stderr together
};

// Runs a shell command with a time limit, capturing its output.
CommandOutput run_command(const std::string& command, int timeout_s = 20);

// rr's usability here: installed, perf counters allowed, CPU supported (a trial `rr record`).
DoctorItem check_rr();
std::vector<DoctorItem> run_doctor();

}  // namespace racelab
