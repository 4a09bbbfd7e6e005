#pragma once
// Replays a device trace (alloc, free_requested, free_completed) through the allocator model and
// compares it with what the real allocator did: where every allocation landed and the sequence
// of segment allocations, frees, maps and unmaps.
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "alloc/allocator.h"
#include "alloc/snapshot.h"

namespace racelab::alloc {

// The allocator state after a given trace event.
struct Sample {
  std::size_t event = 0;  // index into the trace (the state after it)
  std::int64_t time_us = 0;
  std::uint64_t reserved = 0;
  std::uint64_t allocated = 0;
  std::uint64_t active = 0;
  std::int64_t segments = 0;        // the 'segment' statistic (cudaMalloc'd segments)
  std::size_t mapped_segments = 0;  // contiguous mapped ranges, as a snapshot lists them
  std::int64_t device_allocs = 0;
  std::int64_t device_frees = 0;
  std::uint64_t inactive_split_bytes = 0;
  std::uint64_t largest_free = 0;
  std::uint64_t free_cached = 0;
  std::int64_t retries = 0;
  std::int64_t ooms = 0;
  std::uint64_t peak_reserved = 0;
  // The most reserved and allocated after any event since the previous sample (this one's
  // iteration or window, when samples are taken at window ends): the peak inside the window.
  std::uint64_t window_peak_reserved = 0;
  std::uint64_t window_peak_allocated = 0;
};

struct ReplayOptions {
  Config config;
  std::int64_t device = 0;  // the device index written into the segments
  // Give the k-th simulated segment the k-th real segment address (placements comparable).
  bool real_addresses = true;
  // Trace events before which empty_cache() runs. Unset: inferred (see infer rule in
  // docs/allocator.md): a run of real segment frees/unmaps that is exactly what empty_cache
  // would release at that point.
  std::optional<std::set<std::size_t>> empty_cache_at;
  // Events after which to take a Sample (sorted, any subset of indices).
  std::vector<std::size_t> sample_after;
  std::function<void(std::size_t done, std::size_t total)> progress;
  // Capture the segments (as a snapshot lists them) after this trace event.
  std::optional<std::size_t> segments_after;
  // Keep the model's own trace (needed for model_snapshot_value).
  bool keep_trace = false;
};

struct Mismatch {
  std::size_t event = 0;  // trace index
  std::string text;
};

// An allocation that made the allocator go to the device (cudaMalloc or page maps): which trace
// event, what the cache held for it then, and the stack the trace recorded for it.
struct DeviceAllocCause {
  std::size_t event = 0;           // trace index of the alloc
  std::uint64_t requested = 0;     // bytes asked for
  std::int64_t device_allocs = 0;  // device allocations it made
  CacheMiss miss;
  std::int32_t stack = -1;  // TraceEvent::stack
};

struct ReplayResult {
  std::size_t events = 0;
  std::size_t allocs = 0;
  std::size_t allocs_same = 0;  // placed at the real address (same segment, same offset)
  std::size_t model_ooms = 0;   // allocations that succeeded for real but not in the model
  std::size_t real_ooms = 0;
  std::size_t real_segment_events = 0;
  std::size_t model_segment_events = 0;
  std::size_t segment_events_same = 0;       // identical at the same position in both sequences
  std::vector<Mismatch> alloc_mismatches;    // the first few
  std::vector<Mismatch> segment_mismatches;  // the first few
  std::set<std::size_t> empty_cache_at;      // where empty_cache ran
  std::vector<std::string> oom_messages;     // the first few
  std::size_t first_oom_event = 0;           // trace index of the first model OOM (if any)
  std::vector<Sample> samples;
  Stats stats;
  std::uint64_t peak_reserved = 0;
  std::int64_t peak_segments = 0;
  std::size_t final_mapped_segments = 0;
  std::vector<Segment> segments;                    // the model's final state
  std::optional<std::vector<Segment>> segments_at;  // the state after ReplayOptions::segments_after
  std::vector<SegmentEvent> model_events;
  std::vector<TraceEvent> model_trace;   // when ReplayOptions::keep_trace
  std::size_t unmatched_frees = 0;       // frees of addresses the trace never allocated
  std::vector<DeviceAllocCause> causes;  // every allocation that went to the device, in order

  bool identical() const {
    return allocs_same == allocs && model_ooms == 0 && segment_events_same == real_segment_events &&
           model_segment_events == real_segment_events;
  }
};

ReplayResult replay_trace(const std::vector<TraceEvent>& trace, const ReplayOptions& options);

// A snapshot of the model's run, as PyTorch would have written it: 'segments' (final state),
// 'device_traces' (alloc/free events as replayed, segment events as the model made them),
// 'allocator_settings' and 'external_annotations' copied from the source.
struct DeviceReplay {
  std::size_t device;
  const ReplayResult* result;
};
PickleRef model_snapshot_value(const Snapshot& source, const std::vector<DeviceReplay>& devices);
inline PickleRef model_snapshot_value(const Snapshot& source, const ReplayResult& result) {
  return model_snapshot_value(source, std::vector<DeviceReplay>{{0, &result}});
}

}  // namespace racelab::alloc
