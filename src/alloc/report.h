#pragma once
// Stability analysis: the allocator's state at the end of every iteration (or window of events),
// and the verdict: "stable" (no device allocation after the warm phase, warm_phase.h, in enough
// iterations to tell), "not stable" (device allocations after it, each with why) or "not
// measured" (too few iterations after it).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "alloc/attribution.h"
#include "alloc/replay.h"
#include "alloc/warm_phase.h"

namespace racelab::alloc {

// One iteration (or window): trace events [first, end) and, when a stats JSON recorded it, the
// real allocator's numbers at its end, the optimizer steps in it and the sequence length it
// served.
struct Window {
  std::string label;
  std::size_t first = 0;
  std::size_t end = 0;
  struct Recorded {
    std::int64_t reserved = 0, allocated = 0, segments = 0, device_allocs = 0,
                 inactive_split_bytes = 0;
  };
  std::optional<Recorded> recorded;
  std::vector<Step> steps;             // stats JSON version 2 (racelab's capture)
  std::optional<std::int64_t> length;  // the row's "L" (the fixtures' batch length)
};

// The iterations of a racelab capture's stats JSON before version 2 have no steps; a newer
// version is refused (its rows could mean what this racelab does not know).
inline constexpr const char* kStatsFormat = "racelab-alloc-stats";
inline constexpr int kStatsVersion = 2;

struct Boundaries {
  std::string source;       // "stats JSON <file>", "annotations", "windows of N allocations"
  bool iterations = false;  // true: windows are iterations
  std::vector<Window> windows;
  // Why the windows' steps are not known (the warm phase is then assumed); empty: known.
  std::string steps_unknown;
  std::optional<std::int64_t> warmup_length;  // the length a warmup before the rows served
};

// From a stats JSON beside the fixtures: {"rows": [{"iter", "t_start_us", "t_end_us", ...}]};
// events belong to the iteration whose [t_start_us, t_end_us] holds their time_us. Throws
// InputError when no event of the trace falls in any of its iterations (the stats of another run:
// both use the same epoch clock) or when a row is malformed.
Boundaries boundaries_from_stats(const std::vector<TraceEvent>& trace,
                                 const std::filesystem::path& stats,
                                 const std::string& trace_origin = "the trace");
// From annotations (torch.cuda.memory._record_memory_history + record_function-style START/END
// markers in 'external_annotations'): each START..END of the same name is one iteration.
std::optional<Boundaries> boundaries_from_annotations(const std::vector<TraceEvent>& trace,
                                                      const std::vector<Annotation>& annotations);
// Windows of `allocs_per_window` allocations.
Boundaries boundaries_by_window(const std::vector<TraceEvent>& trace,
                                std::size_t allocs_per_window);

struct Row {
  std::string label;
  Sample at_end;
  std::int64_t device_allocs_in = 0;  // device allocations during this window
  std::int64_t device_frees_in = 0;
  double fragmentation = 0;  // 1 - largest free block / free cached bytes (0 when nothing is free)
  std::uint64_t peak_allocated = 0;  // the most allocated at any event of the window
  bool matches_recorded = true;      // reserved, allocated and segments equal the stats JSON's
  std::optional<Window::Recorded> recorded;  // the stats JSON's numbers, when it has them
  std::size_t events_end = 0;                // the trace events [.., events_end) up to its end
};

// Fewer iterations than this after the warm phase, without growth in them, are "not measured":
// there is no stretch to call settled (a 3-iteration single-loop trace has 2).
inline constexpr std::size_t kMinMeasured = 3;

// A window with device allocations and why they happened.
struct Growth {
  std::string label;
  bool warm = false;    // inside the warm phase (expected)
  std::string reason;   // "first step of optimizer 1 (AdamW, thread t)", "length 2048, ..."
  std::size_t row = 0;  // index into StabilityReport::rows
  // After the warm phase: the allocations in it that went to the device (attribution.h) and
  // their call sites, most first.
  std::vector<DeviceAllocCause> causes;
  std::vector<CallSite> sites;
};

struct StabilityReport {
  std::string name;
  std::string boundaries_source;
  bool iterations = false;
  std::vector<Row> rows;
  bool stable = false;                 // stable and measured
  bool measured = true;                // false: too few iterations after the warm phase
  std::size_t stable_from = 0;         // row of the last device allocation (0 when none)
  WarmPhase warm;                      // the iterations that may allocate
  std::size_t after_warm = 0;          // iterations after the warm phase
  std::vector<Growth> growth;          // every window with device allocations
  std::vector<std::string> growth_at;  // labels of windows with device allocations after warm
  std::string verdict;                 // one line
  std::size_t recorded_rows = 0;       // rows with stats JSON numbers
  std::size_t recorded_matches = 0;
  std::uint64_t peak_reserved = 0;
  std::string segments_label;  // the window the segment map shows
  ReplayResult replay;         // samples dropped
  bool frames = false;         // the trace recorded stacks for its allocations
};

// Replays `trace` with `options` (samples at every window end) and judges stability: memory is
// stable when no device allocation happens after the warm phase (find_warm_phase; `settle`, the
// user's --settle, replaces it by the first `settle` windows) and at least kMinMeasured windows
// follow it. `segments_at`: the window whose end state the segment map shows (default: the last).
// `stacks`: the snapshot's stack table (Snapshot::stacks), for the call sites of growth.
StabilityReport analyse(const std::string& name, const std::vector<TraceEvent>& trace,
                        const Boundaries& boundaries, ReplayOptions options,
                        std::optional<std::size_t> settle = std::nullopt,
                        std::optional<std::string> segments_at = std::nullopt,
                        const std::vector<Stack>& stacks = {});

// "stable", "unstable" or "not_measured": the report's state as alloc-report.json and racelab
// check name it.
const char* stability_name(const StabilityReport& r);

// Whether the stats JSON the iterations came from belongs to the trace, given the reports of the
// trace's devices that used it: throws InputError when none of its iterations agrees with any
// device's replay (reserved, allocated, segments and device allocations: the stats of another run),
// returns one warning line per device that agrees only in part or not at all (a stats JSON records
// one device), and nothing when one device agrees everywhere and it is the only one.
std::vector<std::string> check_stats_agreement(const std::vector<const StabilityReport*>& devices,
                                               const std::string& stats_origin,
                                               const std::string& trace_origin);

// report.html for one or more traces: reserved and allocated over time with device allocations
// marked, the segment map, the per-iteration table.
std::string report_html(const std::vector<StabilityReport>& reports);

nlohmann::ordered_json report_json(const StabilityReport& r);
std::string rows_csv(const StabilityReport& r);

}  // namespace racelab::alloc
