#pragma once
// The files racelab alloc replay, report and whatif write with --out (report's --junit is
// report::alloc_junit_xml, src/report/junit.h, the one JUnit writer).
// docs/allocator.md.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "alloc/report.h"
#include "alloc/runs.h"
#include "alloc/snapshot.h"
#include "alloc/whatif.h"

namespace racelab::alloc {

// alloc replay --out DIR: DIR/replay.pickle (the model's run as a memory_viz snapshot) and
// DIR/replay.json (its format and version first, util/document.h; per device: placements and
// segment events as recorded, memory stats).
// `results[k]` is the replay of device `devices[k]`, kept with keep_trace.
void write_replay_outputs(const std::filesystem::path& dir, const Snapshot& snap,
                          const std::string& trace, const Config& config,
                          const std::vector<std::size_t>& devices,
                          const std::vector<ReplayResult>& results);

// alloc report --out DIR: DIR/alloc-report.json (its format and version first, util/document.h),
// DIR/report.html and DIR/<name>.iterations.csv. Returns every file's path, in that order.
std::vector<std::string> write_report_outputs(const std::filesystem::path& dir,
                                              const std::vector<StabilityReport>& reports);

// racelab live alloc's report of its capture `trace`, as alloc report TRACE --out DIR with every
// other setting its default: the reports and warnings (analyse_traces), DIR's files written
// (write_report_outputs).
TraceReports report_capture(const std::string& trace, const std::filesystem::path& dir,
                            const ProgressFor& progress);

// whatif.json's entry for one device: the lines' numbers.
nlohmann::ordered_json whatif_json(std::size_t device, const std::vector<WhatifLine>& lines);

// alloc whatif --out DIR: DIR/whatif.json (its format and version, util/document.h, then every
// device's lines) and a page per device, DIR/whatif.html, or DIR/whatif.deviceN.html where `runs`
// has several devices. Returns every file's path: whatif.json, then the pages in order.
std::vector<std::string> write_whatif_outputs(
    const std::filesystem::path& dir, const std::string& trace,
    const std::vector<std::pair<std::size_t, WhatifRun>>& runs);

}  // namespace racelab::alloc
