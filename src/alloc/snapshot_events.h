#pragma once
// Internal to the snapshot readers (snapshot.cc reads a value tree, snapshot_stream.cc streams):
// the one conversion of a 'device_traces' event dict into a TraceEvent, and the assembly of a
// Snapshot from the root value and the device lists already converted, so that the two readers
// cannot disagree on a single field.
#include <cstddef>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "alloc/pickle.h"
#include "alloc/snapshot.h"

namespace racelab::alloc {

// Trace event dicts to TraceEvents, with their stacks interned (each distinct stack kept once).
class EventReader {
 public:
  explicit EventReader(const std::string& origin) : origin_(origin) {}

  // Converts `e`, item `k` of device_traces[dev], onto `out`; returns false (and appends nothing)
  // for an action this version does not know. Throws InputError "<origin>:
  // device_traces[dev][k]: <problem>".
  bool add(const PickleValue& e, std::size_t dev, std::size_t k, std::vector<TraceEvent>& out);

  const std::string& origin() const { return origin_; }
  std::vector<Stack> take_stacks() { return std::move(stacks_); }

 private:
  std::int32_t intern(const PickleValue& frames);

  const std::string& origin_;
  std::vector<Stack> stacks_;
  std::unordered_map<std::string, std::int32_t> index_;
};

// A device list whose events were converted as they were read (its PickleValue stays empty).
struct StreamedList {
  std::vector<TraceEvent> events;
  std::size_t items = 0;    // events read, known actions or not
  std::size_t ignored = 0;  // of which actions this version does not know
};
using StreamedLists = std::unordered_map<const PickleValue*, StreamedList>;

// The typed view of `root`: device lists in `streamed` as converted (their events moved out), the
// others converted now by `events`. Stack indices are numbered in order of first use over the
// devices' events, whatever order they were converted in.
Snapshot assemble_snapshot(PickleRef root, EventReader& events, StreamedLists& streamed);

// A valid pickle that the streaming reader cannot read as it goes (snapshot_stream.cc says when);
// read_snapshot() then reads the file whole.
class NotStreamable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Reads a snapshot pickle streaming (snapshot_stream.cc). Throws InputError for a bad file,
// NotStreamable as above.
Snapshot stream_snapshot(const std::filesystem::path& path, const std::string& origin);

}  // namespace racelab::alloc
