#pragma once
// The replays behind racelab alloc replay, report and whatif, one device (or one trace) at a time,
// so that the command line only parses options and prints. docs/allocator.md.
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "alloc/inputs.h"
#include "alloc/replay.h"
#include "alloc/report.h"
#include "alloc/whatif.h"

namespace racelab::alloc {

// alloc replay: device `device` of `snap` under `config`, at the recorded addresses (placements
// comparable); `keep_trace` keeps the model's trace for model_snapshot_value.
ReplayResult replay_device(const Snapshot& snap, std::size_t device, const Config& config,
                           bool keep_trace, const std::string& origin, const ProgressFor& progress);

// alloc replay --compare: "allocations: 4540/4540 same placement; segment events: 17/17
// identical".
std::string agreement_text(const ReplayResult& r);

// alloc report: how the iterations are found and judged.
struct ReportSettings {
  std::size_t window = 1000;          // allocations per window when no boundaries are known
  std::optional<std::size_t> settle;  // --settle K: the warm phase is the first K; else found
  std::optional<std::string> segments_at;
  DeviceMemory dev;
};

// One trace's reports (one per device) and the warnings of check_stats_agreement.
struct TraceReports {
  std::vector<StabilityReport> reports;
  std::vector<std::string> warnings;
  std::vector<std::string> written;  // the files report_capture wrote (write_report_outputs)
};

// Reports on `devices` of `snap` (read from `path`). Boundaries: `stats` (stats_for) when not
// empty, or the snapshot's annotations, or windows of allocations. Throws InputError where the
// stats JSON belongs to another run.
TraceReports analyse_trace(const Snapshot& snap, const std::string& path,
                           const std::vector<std::size_t>& devices,
                           const std::filesystem::path& stats, const ReportSettings& settings,
                           const ProgressFor& progress);

// alloc report over `traces`, in order (and racelab live alloc's report of its capture, with
// defaults): each trace's devices (`device`, or -1 for every device with a trace: pick_devices),
// its boundaries (`iterations[t]`, or where none are given the stats JSON beside it: stats_for)
// and analyse_trace's reports and warnings, one trace after another. `check(path, is_stats)`, where
// given, sees each trace and stats JSON before it is read (the command line checks the file's
// kind there).
TraceReports analyse_traces(const std::vector<std::string>& traces,
                            const std::vector<std::string>& iterations, int device,
                            const ReportSettings& settings, const ProgressFor& progress,
                            const std::function<void(const std::string&, bool)>& check = {});

// alloc whatif on one device: the recorded settings first (whose replay also says where the
// program called empty_cache), then each of `configs` on the same empty_cache calls.
struct WhatifRun {
  Config recorded;              // the settings the trace recorded, with the device memory
  std::size_t allocations = 0;  // of the recorded replay
  std::vector<WhatifLine> lines;
};
WhatifRun whatif_device(const Snapshot& snap, const std::string& origin, std::size_t device,
                        const std::vector<std::string>& configs, const DeviceMemory& dev,
                        const ProgressFor& progress);

}  // namespace racelab::alloc
