#pragma once
// What harness/alloc*.cc share (private to the command line): the options every racelab alloc
// subcommand has, and one registration per subcommand's file. alloc.cc registers the family,
// alloc_replay.cc replay, alloc_report.cc report, alloc_whatif.cc whatif and convert,
// alloc_diff.cc diff. The work itself is src/alloc/ (runs.h, outputs.h, inputs.h); report's and
// diff's use cases are src/run/alloc.h.
#include <CLI/CLI.hpp>

#include "alloc/inputs.h"
#include "alloc/runs.h"
#include "command.h"

namespace racelab::cli::alloccmd {

// --device N: only this device's trace.
void add_device_select(CLI::App* cmd, int& device);
// --device-memory and --memory-fraction.
void add_device_options(CLI::App* cmd, alloc::DeviceMemory& d);
// Progress bars for the replays (on a TTY only).
alloc::ProgressFor replay_progress();

void add_replay(CLI::App* alloc, Runner& run);   // alloc_replay.cc
void add_report(CLI::App* alloc, Runner& run);   // alloc_report.cc
void add_whatif(CLI::App* alloc, Runner& run);   // alloc_whatif.cc
void add_convert(CLI::App* alloc, Runner& run);  // alloc_whatif.cc
void add_diff(CLI::App* alloc, Runner& run);     // alloc_diff.cc

// alloc report's printer (alloc_report.cc), which racelab live alloc shares for its capture's
// report (alloc::analyse_traces): the warnings, each report's verdict (with `table` its rows),
// and a table comparing several traces.
void print_reports(const alloc::TraceReports& got, bool table);
// "wrote OUT/alloc-report.json, OUT/report.html, OUT/NAME.iterations.csv": every file
// alloc::write_report_outputs wrote.
void print_written(const std::vector<std::string>& files);

}  // namespace racelab::cli::alloccmd
