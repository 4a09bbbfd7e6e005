#pragma once
// Every kind in one live search (racelab live torch | python --all-findings, docs/live.md): the
// search goes on past each failure, and where an execution leaves threads stuck in the process
// (a deadlock, a hang: live::Result::hung) it goes on in a fresh process, which takes the search
// over where this one stopped: the strategy's state (Strategy::hand_over, dpor's in
// sched/strategies/dpor_state.h), what the search counted, and what it found, each kind with
// its schedule file. The fresh process is this one's program run again with the same arguments
// and --continue-from FILE (exec, so that the stuck threads end with the old image); its search
// goes on at the next execution and reports every kind found in any process.
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sched/exploration.h"

namespace racelab::live {

// A failing execution an --all-findings search kept: the first whose worst failure
// (worst_failure) is of `kind`; its schedule file is named after that kind.
struct Found {
  std::string kind;
  std::uint64_t execution = 0;
  std::uint64_t decisions = 0;
  std::string schedule;             // its schedule-<kind>.json
  nlohmann::ordered_json findings;  // its findings, as report.json lists them
};

// What a process hands to the next one.
struct Handover {
  std::string strategy;  // Strategy::hand_over's text
  std::string hash;      // the subject's content hash: the next process checks it is the same
  std::uint64_t processes = 1;  // the processes the search ran in so far
  sched::Tally tally;           // executions, decisions and interleaving classes so far
  double seconds = 0;           // the earlier processes' search time
  double wall_seconds = 0;      // their whole time, each one's start (torch's import) included:
                                // what --time-limit counts
  std::map<std::string, std::uint64_t> kinds;  // executions in which each kind was seen
  std::uint64_t settled = 0;                   // decisions that waited for --settle-ms
  std::vector<Found> found;                    // in execution order
};

// Where a search's handover goes: OUT/handover.json.
std::filesystem::path handover_path(const std::string& out);
void write_handover(const std::filesystem::path& path, const Handover& h);
// InputError for a file that is not one, in one line.
Handover read_handover(const std::string& path);

// `argv` with --continue-from `handover` after its `live torch` or `live python` (an earlier
// --continue-from dropped): the command line of the fresh process.
std::vector<std::string> continuation_argv(std::vector<std::string> argv,
                                           const std::string& handover);
// This process's arguments, argv[0] first (/proc/self/cmdline); empty where it cannot be read.
// What a fresh process (continue_in_fresh_process) and a split's workers (split.h) run again.
std::vector<std::string> own_command_line();
// Replaces this process with racelab run again on continuation_argv(this process's arguments):
// the threads stuck in this one end with it. Returns only where exec failed (the error's text).
std::string continue_in_fresh_process(const std::string& handover);

}  // namespace racelab::live
