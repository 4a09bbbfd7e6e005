#pragma once
// What every subcommand file shares: registration, the interrupt flag, progress on a TTY.
// Each subcommand lives in its own file and registers itself with add_<name>(app, run); the
// callback it installs returns the exit code (docs/cli.md).
#include <CLI/CLI.hpp>
#include <atomic>
#include <functional>
#include <string>

#include "sched/explore.h"

namespace racelab::cli {

using Runner = std::function<int()>;

void add_doctor(CLI::App& app, Runner& run);
void add_explore(CLI::App& app, Runner& run);
void add_replay(CLI::App& app, Runner& run);
void add_shrink(CLI::App& app, Runner& run);
void add_suite(CLI::App& app, Runner& run);
void add_alloc(CLI::App& app, Runner& run);

// Raised by SIGINT; long runs stop at the next execution and write what they found.
std::atomic<bool>& interrupted();

// A progress line on stderr, redrawn in place, only when stderr is a terminal.
std::function<void(const sched::ExploreProgress&)> progress_printer(const std::string& what);
void clear_progress();

}  // namespace racelab::cli
