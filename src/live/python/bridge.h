#pragma once
// The Python bridge: racelab embeds CPython (pybind11) and runs a user's script as a live subject.
//
// Threads the script starts with threading.Thread become controlled threads; an interposition
// table (data/interpose/<name>.json, one file per torch version) replaces the locks it names with
// racelab's instrumented re-entrant lock, marks hand-offs to other threads as blocking calls and
// makes function entries scheduling points. Threads the script did not start through threading
// (LibTorch's autograd workers; _thread threads) stay foreign. docs/live.md explains it.
#include <memory>
#include <string>
#include <vector>

#include "live/live.h"

namespace racelab::live::python {

struct Job {
  std::string script;             // path of the script run as __main__
  std::vector<std::string> args;  // its sys.argv[1:]
  std::string interpose;          // a table name (data/interpose), "none", or a JSON file path
  std::vector<std::string> path;  // prepended to sys.path (default: the script's directory)
  // Entries added to the table from the command line, so the common case needs no table file:
  // MODULE.ATTR of a dict cache (lookups and inserts are points), of a lock (racelab's,
  // re-entrant), of a function (its entry is a point), and MODULE.FUNC[=SERVED_BY] of a call that
  // waits for a thread racelab does not control.
  std::vector<std::string> dicts, locks, points, blocking;
};

bool built_with_python();
std::string build_description();  // "CPython 3.11.2 (embedded)"

// The table's JSON text: `name_or_path` is a file, or one of the tables built in (standin,
// torch-2.11). Throws InputError listing them.
std::string interposition_table(const std::string& name_or_path);

// Starts the interpreter (once per process) and makes the live subject; InputError for a missing
// script or a bad table.
std::unique_ptr<Subject> make_subject(const Job& job);
std::string job_json(const Job& job);
Job job_from_json(const std::string& text);

// Writes every thread's Python stack to `path` (for hang reports); best effort.
void dump_stacks(const std::string& path);

// From now on, a fatal signal (a C extension crashing, abort()) writes DIR/report.json with a
// `crash` finding naming the execution and the signal, and DIR/stacks.txt with every thread's
// Python stack, then exits 1: the report is never lost to a crash.
void arm_crash_report(const std::string& dir);

}  // namespace racelab::live::python
