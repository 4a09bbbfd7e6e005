#pragma once
// What happens on a device, as a memory_viz trace records it ('device_traces' entries) and as the
// allocator model reports it: the actions and one typed event. Reading them from a snapshot is
// snapshot.h; the model needs only this vocabulary, not the pickle it came from.
#include <cstdint>
#include <string>
#include <vector>

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
  // The Python stack of an alloc, an index into Snapshot::stacks; -1 when the trace recorded
  // none (context=None). Kept as an index: a trace of a million events repeats a few stacks.
  std::int32_t stack = -1;
};

// One frame of a recorded stack, as memory_viz lists it ('frames': [{filename, line, name}]).
struct Frame {
  std::string filename;
  std::int64_t line = 0;
  std::string name;
  bool operator==(const Frame&) const = default;
};
using Stack = std::vector<Frame>;  // innermost frame first, as the snapshot lists them

}  // namespace racelab::alloc
