#pragma once
// What happens on a device, as a memory_viz trace records it ('device_traces' entries) and as the
// allocator model reports it: the actions and one typed event. Reading them from a snapshot is
// snapshot.h; the model needs only this vocabulary, not the pickle it came from.
#include <cstdint>

namespace racelab::alloc {

enum class Action {
  kAlloc,
  kFreeRequested,
  kFreeCompleted,
  kSegmentAlloc,
  kSegmentFree,
  kSegmentMap,
  kSegmentUnmap,
  kOom,
  kSnapshot,
  kUserDefined,
};

// PyTorch's name for an action ("alloc", "free_requested", "segment_map", ...).
const char* action_name(Action a);

struct TraceEvent {
  Action action = Action::kAlloc;
  std::uint64_t addr = 0;  // for kOom: the device's free memory at the time
  std::uint64_t size = 0;  // alloc: requested bytes; frees: requested bytes; segments: bytes
  std::int64_t stream = 0;
  std::int64_t time_us = 0;
};

}  // namespace racelab::alloc
