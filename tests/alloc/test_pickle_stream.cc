// The streaming snapshot reader against the tree reader: the same typed trace from every recorded
// pickle and every pickle the tests write, the same verdict on truncated and corrupted files, and
// the memo cases that only a stream meets (a frames list read again after its event went, an event
// changed after it was read).
#include <cstdint>
#include <filesystem>
#include <string>

#include "alloc/pickle.h"
#include "alloc/snapshot.h"
#include "alloc_data.h"
#include "catch.h"
#include "util/errors.h"
#include "util/files.h"
#include "util/rng.h"

using namespace racelab;
using namespace racelab::alloc;
using racelab::alloc::testing::same_value;
namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("racelab-pickle-stream-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir / name;
}

// Everything a reader gives the commands: the traces, their stacks, annotations, counts, and the
// snapshot's other keys.
void same_snapshot(const Snapshot& tree, const Snapshot& stream) {
  REQUIRE(tree.traces.size() == stream.traces.size());
  for (std::size_t d = 0; d < tree.traces.size(); ++d) {
    REQUIRE(tree.traces[d].size() == stream.traces[d].size());
    for (std::size_t k = 0; k < tree.traces[d].size(); ++k) {
      const TraceEvent& a = tree.traces[d][k];
      const TraceEvent& b = stream.traces[d][k];
      INFO("device " << d << " event " << k);
      REQUIRE(a.action == b.action);
      REQUIRE(a.addr == b.addr);
      REQUIRE(a.size == b.size);
      REQUIRE(a.stream == b.stream);
      REQUIRE(a.time_us == b.time_us);
      REQUIRE(a.stack == b.stack);
    }
  }
  CHECK(tree.stacks == stream.stacks);
  CHECK(tree.segment_count == stream.segment_count);
  CHECK(tree.ignored_events == stream.ignored_events);
  REQUIRE(tree.annotations.size() == stream.annotations.size());
  for (std::size_t k = 0; k < tree.annotations.size(); ++k) {
    CHECK(tree.annotations[k].stage == stream.annotations[k].stage);
    CHECK(tree.annotations[k].name == stream.annotations[k].name);
    CHECK(tree.annotations[k].time_us == stream.annotations[k].time_us);
  }
  for (const auto& [k, v] : tree.root->dict) {
    if (k->is_str() && k->s == "device_traces") continue;
    INFO("key " << (k->is_str() ? k->s : "?"));
    const PickleValue* other = k->is_str() ? stream.root->get(k->s) : nullptr;
    REQUIRE(other);
    CHECK(same_value(*v, *other));
  }
}

void same_both_ways(const fs::path& path) {
  INFO(path.string());
  same_snapshot(read_snapshot(path, SnapshotReader::kTree),
                read_snapshot(path, SnapshotReader::kStream));
}

std::string outcome(const fs::path& path, SnapshotReader reader) {
  try {
    const Snapshot s = read_snapshot(path, reader);
    std::size_t events = 0;
    for (const auto& t : s.traces) events += t.size();
    return "read " + std::to_string(events) + " events";
  } catch (const InputError& e) {
    const std::string what = e.what();
    CHECK(what.find('\n') == std::string::npos);  // one line
    return "error";
  }
}

// A small snapshot with frames, as racelab's writer pickles it (protocol 4, strings memoised).
PickleRef small_snapshot() {
  auto frame = [](const char* file, int line, const char* name) {
    auto f = PickleValue::new_dict();
    f->set("filename", PickleValue::str(file));
    f->set("line", PickleValue::integer(line));
    f->set("name", PickleValue::str(name));
    return f;
  };
  auto root = PickleValue::new_dict();
  root->set("segments", PickleValue::list());
  auto devices = PickleValue::list();
  for (int d = 0; d < 2; ++d) {
    auto trace = PickleValue::list();
    for (int k = 0; k < 40; ++k) {
      auto e = PickleValue::new_dict();
      e->set("action", PickleValue::str(k % 2 ? "free_completed" : "alloc"));
      e->set("addr", PickleValue::integer(4096 * (k / 2 + 1)));
      e->set("size", PickleValue::integer(512 + k));
      e->set("stream", PickleValue::integer(0));
      e->set("time_us", PickleValue::integer(1000 + k));
      e->set("frames", PickleValue::list({frame("train.py", 10 + k % 3, "step"),
                                          frame("main.py", 5, "<module>")}));
      trace->items.push_back(e);
    }
    devices->items.push_back(trace);
  }
  root->set("device_traces", devices);
  root->set("allocator_settings", PickleValue::new_dict());
  return root;
}

}  // namespace

TEST_CASE("pickle stream: every recorded snapshot reads as the tree reader reads it",
          "[pickle_stream]") {
  // Of the traces under other settings, the expandable-segment ones (segment_map and
  // segment_unmap events); the others have the fixtures' events (CI time).
  int files = 0;
  for (const fs::path& dir :
       {testing::fixtures_dir(), testing::traces_dir(), testing::live_traces_dir(),
        testing::frames_traces_dir(), testing::fixtures_dir().parent_path() / "conformance-h200"}) {
    REQUIRE(fs::is_directory(dir));
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
      const fs::path& p = entry.path();
      if (p.extension() != ".pickle") continue;
      if (dir == testing::traces_dir() && p.stem().string().find("_es") == std::string::npos)
        continue;
      same_both_ways(p);
      ++files;
    }
  }
  CHECK(files >= 20);
}

TEST_CASE("pickle stream: racelab's own pickles and their JSON read the same", "[pickle_stream]") {
  const fs::path p = scratch("small.pickle");
  write_file_atomic(p, write_pickle(*small_snapshot()));
  same_both_ways(p);
  const Snapshot s = read_snapshot(p);
  CHECK(s.traces.at(0).size() == 40);
  CHECK(s.stacks.size() == 3);
  // Read streaming, the snapshot keeps its other keys and empty device lists.
  REQUIRE(s.root->get("device_traces"));
  CHECK(s.root->get("device_traces")->items.at(0)->items.empty());
  const fs::path j = scratch("small.json");
  write_snapshot_value(j, *small_snapshot());
  same_snapshot(read_snapshot(p, SnapshotReader::kTree), read_snapshot(j));
}

TEST_CASE("pickle stream: truncated and corrupted files get the tree reader's verdict, in one line",
          "[pickle_stream]") {
  const std::string bytes = write_pickle(*small_snapshot());
  const fs::path p = scratch("cut.pickle");
  for (std::size_t n = 0; n < bytes.size(); n += (n < 64 ? 1 : 53)) {
    INFO("truncated to " << n << " bytes");
    write_file_atomic(p, bytes.substr(0, n));
    CHECK(outcome(p, SnapshotReader::kStream) == "error");
  }
  Rng rng(7);
  int rejected = 0;
  for (int trial = 0; trial < 150; ++trial) {
    std::string m = bytes;
    const int flips = 1 + static_cast<int>(rng.next() % 3);
    for (int f = 0; f < flips; ++f) m[rng.next() % m.size()] = static_cast<char>(rng.next() & 0xff);
    write_file_atomic(p, m);
    INFO("trial " << trial);
    const std::string tree = outcome(p, SnapshotReader::kTree);
    CHECK(outcome(p, SnapshotReader::kStream) == tree);
    rejected += tree == "error";
  }
  CHECK(rejected > 0);
}

TEST_CASE("pickle stream: a memo read of an event's values after the event, and a change to it",
          "[pickle_stream]") {
  // Protocol 4 by hand: root {'device_traces': [[E1, E2]]}, E1 = {'action': 'alloc', 'addr': 16,
  // 'size': 8, 'frames': F}, then E2 reads E1's dict back from the memo (key 2).
  const std::string head =
      "\x80\x04}\x94(\x8c\x0d"
      "device_traces\x94]\x94]\x94(";
  const std::string e1 =
      "}\x94(\x8c\x06"
      "action\x8c\x05"
      "alloc\x8c\x04"
      "addr"
      "K\x10\x8c\x04"
      "size"
      "K\x08u";
  // Memo keys: 0 root, 1 'device_traces', 2 device_traces, 3 the device's list, 4 E1.
  const std::string again = head + e1 +
                            "h\x04"
                            "e"
                            "a"
                            "u.";
  const fs::path p = scratch("again.pickle");
  write_file_atomic(p, again);
  const Snapshot tree = read_snapshot(p, SnapshotReader::kTree);
  REQUIRE(tree.traces.at(0).size() == 2);
  same_snapshot(tree, read_snapshot(p, SnapshotReader::kStream));
  // E1 changed after it was appended ('size' set again): the stream cannot have it, so the file
  // is read whole and both readers see size 9 in both events.
  const std::string changed = head + e1 +
                              "h\x04"
                              "e"
                              "h\x04\x8c\x04"
                              "size"
                              "K\x09s0"
                              "a"
                              "u.";
  write_file_atomic(p, changed);
  const Snapshot t2 = read_snapshot(p, SnapshotReader::kTree);
  const Snapshot s2 = read_snapshot(p, SnapshotReader::kStream);
  same_snapshot(t2, s2);
}
