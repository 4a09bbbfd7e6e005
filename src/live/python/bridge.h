#pragma once
// The Python bridge: racelab embeds CPython (pybind11) and runs a user's script as a live subject.
//
// Threads the script starts with threading.Thread become controlled threads; an interposition
// table (data/interpose/<name>.json, one file per torch version) replaces the locks it names with
// racelab's instrumented re-entrant lock, marks hand-offs to other threads as blocking calls and
// makes function entries scheduling points. Threads the script did not start through threading
// (LibTorch's autograd workers; _thread threads) stay foreign. docs/live.md explains it.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "live/live.h"
#include "live/python/versions.h"
#include "live/search.h"
#include "sched/schedule.h"
#include "sched/strategy.h"

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
  // The interpreter's string hash seed, as PYTHONHASHSEED=N sets it: fixed, so that a set of
  // strings iterates in the same order in every process (a schedule replays in a fresh one).
  std::uint32_t hash_seed = 0;
  // The virtual environment the interpreter runs in (--python ENV, or $VIRTUAL_ENV): its
  // site-packages, as running ENV/bin/python would have them; "" for the interpreter's own.
  std::string python;
  // --refuse-other-torch: a torch or Python outside the table's verified range (versions.h) is
  // bad input rather than a warning. Not recorded: a policy of the run, not part of the subject.
  bool refuse_unverified = false;
};

// The hash seed of a new run: PYTHONHASHSEED where it is an integer in [0, 4294967295], 0 where
// it is unset or empty; InputError for "random" (a run must replay) or anything else.
std::uint32_t hash_seed_from_environment();

bool built_with_python();
std::string build_description();  // "CPython 3.11.2 (embedded)"

// The table's JSON text: `name_or_path` is a file, or one of the tables built in (standin,
// torch-2.11). Throws InputError listing them.
std::string interposition_table(const std::string& name_or_path);

// Starts the interpreter (once per process) and makes the live subject; InputError for a missing
// script (or a directory) or a bad table. `recorded_script`: a replay's script as its schedule
// spells it, where the replay found it elsewhere (util/files.h, recorded_path), so that the
// subject's content hash is the recording's; "" for job.script.
// `versions`, where given, receives what the interpreter imported against the table's verified
// range (versions.h); a run outside it is InputError with Job::refuse_unverified.
std::unique_ptr<Subject> make_subject(const Job& job, const std::string& recorded_script = "",
                                      VersionCheck* versions = nullptr);
// The job as its schedules and report record it (JobInfo::parameters): script, args, interpose,
// path, then dicts, locks, points and blocking where not empty, hash_seed, and python where set;
// and back, a missing optional entry at its default (older schedules: hash seed 0), InputError
// "script parameters: <key>: ..." for a missing or mistyped one.
sched::SubjectConfig job_config(const Job& job);
Job job_from_config(const sched::SubjectConfig& config);
// The content hash's input (make_subject's recorded identity): the same entries as compact JSON
// text. Its bytes are every recorded schedule's hash: they must not change.
std::string job_json(const Job& job);

// racelab live python's run (live/search.h). Replaying (`replay` a schedule's path, `recorded` that
// schedule as read): the job its header records (script, arguments, table, hash seed), its steps
// the strategy. Searching (`replay` ""): `job` under `search()`'s strategy. `job` is left as it
// runs (the recorded one when replaying). The run ends the process (Job::exit_process) and arms
// the crash report in the output directory (Job::arm).
live::Job make_job(Job& job, const std::string& replay, std::optional<sched::Schedule> recorded,
                   const std::function<std::unique_ptr<sched::Strategy>()>& search);

// `racelab doctor`'s lines for the Python a live run would use: the interpreter (version,
// environment), torch (version, CUDA build, CUDA devices) and the table (`job.interpose`) against
// them, as (name, ok, value). Starts the interpreter and imports torch.
std::vector<std::tuple<std::string, bool, std::string>> describe_environment(const Job& job);

// Writes every thread's Python stack to `path` (for hang reports); best effort.
void dump_stacks(const std::string& path);

// The allocator capture (`--alloc DIR`, racelab.py): from now on the CUDA caching allocator's
// history is recorded on every device, with an iteration boundary at each optimizer step or
// racelab.iteration() marker. InputError when torch does not import or there is no CUDA device.
// `name` is the files' stem: DIR/snap_<name>.cuda<k>.pickle, DIR/stats_<name>.cuda<k>.json.
void start_alloc_capture(const Job& job, const std::string& dir, const std::string& name);
// Writes the capture, once (later calls return nothing): its lines for the terminal. `ended`
// says how the run ended ("complete", or a finding's kind), noted in the stats JSON. Gives up,
// with a line saying so, where a thread holds the GIL for 30 s.
std::vector<std::string> finish_alloc_capture(const std::string& ended);

// `--uncontrolled`: the script run once as plain Python would run it (its threads real, nothing
// interposed; the table only classifies the exceptions that end its threads).
struct PlainRun {
  bool finished = false;  // false: still running after the time limit (a hang)
  double seconds = 0;
  std::vector<std::pair<std::string, std::string>> failures;  // (kind, message)
  // How it ended, in a live search's words: "hang", the first failure's kind, or "complete".
  std::string ended() const {
    return !finished ? "hang" : !failures.empty() ? failures.front().first : "complete";
  }
};
PlainRun run_plain(const Job& job, double time_limit_s);  // time_limit_s 0: no limit

// From now on, a fatal signal (a C extension crashing, abort()) writes DIR/report.json with a
// `crash` finding naming the execution and the signal, and DIR/stacks.txt with every thread's
// Python stack, then exits 1: the report is never lost to a crash.
void arm_crash_report(const std::string& dir);

}  // namespace racelab::live::python
