#pragma once
// A memory_viz snapshot (torch.cuda.memory._snapshot()) as racelab reads it: the raw value tree
// (kept so that a converted file keeps every key) plus typed views of what replay needs: each
// device's trace, the allocator settings and the annotations. The way back too: typed segments
// (the model's state) as the snapshot's 'segments' values, and a value tree written as a file.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "alloc/pickle.h"
#include "alloc/segments.h"
#include "alloc/trace.h"

namespace racelab::alloc {

struct Annotation {
  std::string stage;  // "START" or "END"
  std::string name;
  std::int64_t device = 0;
  std::int64_t time_us = 0;
};

struct Snapshot {
  // The snapshot's value. Read streaming, its 'device_traces' lists are empty: their events are
  // in `traces` only.
  PickleRef root;
  std::vector<std::vector<TraceEvent>> traces;  // one per device, in recorded order
  std::vector<Annotation> annotations;
  std::vector<Stack> stacks;       // the distinct stacks of alloc events (TraceEvent::stack)
  std::size_t segment_count = 0;   // segments listed in the snapshot's final state
  std::size_t ignored_events = 0;  // trace actions this version does not know
};

// How read_snapshot reads a pickle. kStream (what the commands use) reads the file by chunks, twice
// (the first pass learns which memo entries are read again: pickle_memo.h), and turns each trace
// event into a TraceEvent as soon as it is read, so that memory holds the typed trace, not the
// file nor its values; a valid pickle it cannot stream (snapshot_stream.cc: a trace event changed
// after it was appended, a device list used elsewhere) is read as kTree. kTree reads the whole
// file and keeps every value (alloc convert writes them back).
enum class SnapshotReader { kStream, kTree };

// Reads a snapshot: a pickle (as PyTorch writes it) or its JSON equivalent (by content: a file
// that starts with '{' is JSON; read whole). Throws InputError with the file and what is wrong.
Snapshot read_snapshot(const std::filesystem::path& path,
                       SnapshotReader reader = SnapshotReader::kStream);

// Builds the typed view of an already parsed value tree (`origin` names it in messages).
Snapshot snapshot_from_value(PickleRef root, const std::string& origin);

// torch.cuda.memory._snapshot()['segments'] for `segments`: the keys, key order and types PyTorch
// writes (memory_viz reads them; racelab compares them with a real snapshot's).
PickleRef segments_value(const std::vector<Segment>& segments);

// Writes pickle or JSON by extension (.json -> JSON, anything else -> pickle), atomically.
void write_snapshot_value(const std::filesystem::path& path, const PickleValue& root);

}  // namespace racelab::alloc
