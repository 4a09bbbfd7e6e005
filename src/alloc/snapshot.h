#pragma once
// A memory_viz snapshot (torch.cuda.memory._snapshot()) as racelab reads it: the raw value tree
// (kept so that a converted file keeps every key) plus typed views of what replay needs: each
// device's trace, the allocator settings and the annotations.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "alloc/pickle.h"

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

const char* action_name(Action a);

struct TraceEvent {
  Action action = Action::kAlloc;
  std::uint64_t addr = 0;  // for kOom: the device's free memory at the time
  std::uint64_t size = 0;  // alloc: requested bytes; frees: requested bytes; segments: bytes
  std::int64_t stream = 0;
  std::int64_t time_us = 0;
};

struct Annotation {
  std::string stage;  // "START" or "END"
  std::string name;
  std::int64_t device = 0;
  std::int64_t time_us = 0;
};

struct Snapshot {
  PickleRef root;
  std::vector<std::vector<TraceEvent>> traces;  // one per device, in recorded order
  std::vector<Annotation> annotations;
  std::size_t segment_count = 0;   // segments listed in the snapshot's final state
  std::size_t ignored_events = 0;  // trace actions this version does not know
};

// Reads a snapshot: a pickle (as PyTorch writes it) or its JSON equivalent (by content: a file
// that starts with '{' is JSON). Throws InputError with the file and what is wrong.
Snapshot read_snapshot(const std::filesystem::path& path);

// Builds the typed view of an already parsed value tree (`origin` names it in messages).
Snapshot snapshot_from_value(PickleRef root, const std::string& origin);

// Writes pickle or JSON by extension (.json -> JSON, anything else -> pickle), atomically.
void write_snapshot_value(const std::filesystem::path& path, const PickleValue& root);

}  // namespace racelab::alloc
