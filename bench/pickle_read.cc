// Reads one memory_viz snapshot with the reader named, then replays every device's trace, and
// prints what a comparison of readers needs on one line: bytes, read time and throughput, events,
// a digest of the typed trace (every event's fields and its stack's frames) and of the replay
// (reserved bytes, segments, device allocations). Peak memory is measured outside
// (bench/alloc_pickle_stream.sh runs it under /usr/bin/time -v).
//   racelab_pickle_read tree|stream SNAPSHOT
#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>

#include "alloc/replay.h"
#include "alloc/snapshot.h"
#include "util/errors.h"
#include "util/hash.h"

using namespace racelab;
using namespace racelab::alloc;

namespace {

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  return fnv1a64(std::string_view(reinterpret_cast<const char*>(&v), sizeof v), h);
}

std::uint64_t trace_digest(const Snapshot& s) {
  std::uint64_t h = fnv1a64("racelab typed trace");
  for (const auto& trace : s.traces) {
    h = mix(h, trace.size());
    for (const TraceEvent& e : trace) {
      h = mix(h, static_cast<std::uint64_t>(e.action));
      h = mix(h, e.addr);
      h = mix(h, e.size);
      h = mix(h, static_cast<std::uint64_t>(e.stream));
      h = mix(h, static_cast<std::uint64_t>(e.time_us));
      h = mix(h, static_cast<std::uint64_t>(static_cast<std::int64_t>(e.stack)));
    }
  }
  for (const Stack& st : s.stacks) {
    for (const Frame& f : st) {
      h = fnv1a64(f.filename, h);
      h = mix(h, static_cast<std::uint64_t>(f.line));
      h = fnv1a64(f.name, h);
    }
    h = mix(h, st.size());
  }
  return mix(h, s.ignored_events);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || (std::strcmp(argv[1], "tree") != 0 && std::strcmp(argv[1], "stream") != 0)) {
    fmt::print(stderr, "usage: racelab_pickle_read tree|stream SNAPSHOT\n");
    return kExitBadInput;
  }
  const bool tree = std::strcmp(argv[1], "tree") == 0;
  const std::filesystem::path path = argv[2];
  try {
    const auto t0 = std::chrono::steady_clock::now();
    const Snapshot s = read_snapshot(path, tree ? SnapshotReader::kTree : SnapshotReader::kStream);
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::size_t events = 0;
    for (const auto& t : s.traces) events += t.size();
    std::uint64_t replay = fnv1a64("racelab replay");
    for (std::size_t dev = 0; dev < s.traces.size(); ++dev) {
      ReplayOptions opt;  // default settings; synthetic traces have no real segments
      opt.real_addresses = false;
      opt.device = static_cast<std::int64_t>(dev);
      const ReplayResult r = replay_trace(s.traces[dev], opt);
      replay = mix(replay, r.peak_reserved);
      replay = mix(replay, static_cast<std::uint64_t>(r.peak_segments));
      replay = mix(replay, r.model_events.size());
      replay = mix(replay, r.allocs);
      replay = mix(replay, r.unmatched_frees);
    }
    const double bytes = static_cast<double>(std::filesystem::file_size(path));
    fmt::print(
        "reader {} bytes {:.0f} read {:.2f} s ({:.1f} MB/s) events {} stacks {} trace digest {} "
        "replay digest {}\n",
        argv[1], bytes, secs, bytes / 1e6 / secs, events, s.stacks.size(), hex64(trace_digest(s)),
        hex64(replay));
    return kExitOk;
  } catch (const InputError& e) {
    fmt::print(stderr, "{}\n", e.what());
    return kExitBadInput;
  }
}
