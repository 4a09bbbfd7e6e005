#pragma once
// Running racelab itself as a child process (suite's live cases, racelab check): a live run may
// leave threads stuck in real calls and must end its own process.
#include <string>
#include <vector>

namespace racelab {

// Runs argv[0] with argv, PYTHONPATH prefixed with `python_path` (kept as it was where empty),
// stdout and stderr to the file `log`; waits for it and returns its exit code (128 + signal for a
// child killed by one, -1 where it could not start).
int spawn_and_wait(const std::vector<std::string>& argv, const std::string& python_path,
                   const std::string& log);

// Asks the child spawn_and_wait waits for, and every child it starts from now on, to stop as an
// interrupt stops racelab: SIGINT, which a racelab child takes as Ctrl-C (it stops at its next
// execution and writes what it found). For a SIGINT or SIGTERM handler: async-signal-safe.
void interrupt_children();

// The last non-empty line of a text file ('' where it cannot be read): a child's one-line error.
std::string last_line(const std::string& path);

// Where this racelab runs from (/proc/self/exe), for the child process.
std::string self_executable();

// argv as one shell line, quoted where needed.
std::string shell_line(const std::vector<std::string>& argv);

}  // namespace racelab
