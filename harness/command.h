#pragma once
// What every subcommand file shares: registration, the interrupt flag, progress on a TTY.
// Each subcommand lives in its own file and registers itself with add_<name>(app, run); the
// callback it installs returns the exit code (docs/cli.md).
#include <CLI/CLI.hpp>
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "results/scenario_run.h"
#include "run/live_case.h"
#include "sched/explore.h"

namespace racelab::cli {

using Runner = std::function<int()>;

void add_doctor(CLI::App& app, Runner& run);
void add_explore(CLI::App& app, Runner& run);
void add_replay(CLI::App& app, Runner& run);
void add_shrink(CLI::App& app, Runner& run);
void add_suite(CLI::App& app, Runner& run);
void add_alloc(CLI::App& app, Runner& run);

void add_merge(CLI::App& app, Runner& run);
void add_live(CLI::App& app, Runner& run);
void add_check(CLI::App& app, Runner& run);

// The command line racelab was started with (for re-running itself under rr).
std::vector<std::string>& program_args();

// --jobs N and --shard K/N (explore, suite).
struct PartitionArgs {
  unsigned jobs = 1;
  std::string shard;  // "K/N"
};
void add_partition_options(CLI::App* cmd, PartitionArgs& args);
// --python ENV and --refuse-other-torch (check, suite): the interpreter of every `racelab live
// python` child, as live python takes them. `what` names the children ("each variant's runs").
void add_live_python_options(CLI::App* cmd, results::LivePython& python, const std::string& what);
// Throws InputError for a malformed --shard.
sched::Partition partition_from(const PartitionArgs& args);
// What a split (--jobs above one, --shard) costs the strategy's search, where its row says it
// costs something (sched::split_cost; dpor: its state cache belongs to one job): the one line that
// says so, for stderr; empty otherwise. `scope` names what is split ("dpor's search", "each dpor
// scenario's search").
std::string split_note(const sched::StrategyParams& strategy, const sched::Partition& p,
                       const PartitionArgs& args, const std::string& scope);

// Raised by SIGINT; long runs stop at the next execution and write what they found.
std::atomic<bool>& interrupted();
// The handler of SIGINT (every command) and, for racelab check, SIGTERM: raises interrupted() and
// passes the interrupt on to a racelab child being waited for (util/spawn.h).
void on_interrupt_signal(int);
// After a search (explore, live) that an interrupt or the time limit stopped: "interrupted:
// results so far written" or "time limit reached: results so far written". Nothing otherwise.
void print_stopped_early(bool interrupted, bool time_limit);

// A progress line on stderr, redrawn in place, only when stderr is a terminal. Sampling
// strategies run their whole budget: a bar, a percentage and the time left. A proving search
// (dfs, dpor: `open_ended`) usually ends long before its cap: executions done "up to N", no
// percentage, no estimate.
std::function<void(const sched::ExploreProgress&)> progress_printer(const std::string& what,
                                                                    bool open_ended = false);
void clear_progress();

// A progress bar for counted work ("replaying X [####....] 45% 20000/45858 events"), on a TTY only.
std::function<void(std::size_t done, std::size_t total)> count_progress(const std::string& what,
                                                                        const std::string& unit);

// Colour for the end-of-run summary, only when stdout is a terminal and NO_COLOR is unset.
enum class Colour { kGreen, kRed, kYellow, kDim };
std::string paint(const std::string& text, Colour c);

// PASS (green), FAIL (red) or INCONCLUSIVE (yellow) for a scenario run.
std::string verdict_word(const results::ScenarioRun& run);

// Option checks in racelab's words, applied to the text before CLI11 converts it (so "-1" never
// wraps into an unsigned option): "--iterations: expected a positive integer, got 0".
CLI::Validator integer_check(std::int64_t lo, std::int64_t hi = INT64_MAX);
CLI::Validator seconds_check();  // a number >= 0
CLI::Validator one_of(std::vector<std::string> words);

// Translates CLI11's parse errors into one line of racelab's own: unknown commands and options
// with the closest one suggested, missing arguments named as --help names them.
std::string parse_error_text(CLI::App& app, const CLI::ParseError& e, int argc, char** argv);

}  // namespace racelab::cli
