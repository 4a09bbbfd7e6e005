// Real H200 traces replayed through the model: every allocation at the real address, every
// segment event identical, the final state equal to the real snapshot, and the stability verdicts.
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "alloc/outputs.h"
#include "alloc/replay.h"
#include "alloc/report.h"
#include "alloc/runs.h"
#include "alloc/snapshot.h"
#include "alloc_data.h"
#include "catch.h"

using namespace racelab::alloc;
using racelab::alloc::testing::fixtures_dir;
using racelab::alloc::testing::live_traces_dir;
using racelab::alloc::testing::same_value;
using racelab::alloc::testing::traces_dir;

namespace {

struct Case {
  std::filesystem::path path;
  double memory_fraction = 0;
};

void check_exact(const Case& c) {
  INFO(c.path.string());
  const Snapshot s = read_snapshot(c.path);
  REQUIRE(s.traces.size() == 1);
  ReplayOptions opt;
  opt.config = config_from_snapshot(s.root->get("allocator_settings"), c.path.string());
  opt.config.memory_fraction = c.memory_fraction;
  const ReplayResult r = replay_trace(s.traces[0], opt);
  for (const auto& m : r.alloc_mismatches) INFO(m.text);
  for (const auto& m : r.segment_mismatches) INFO(m.text);
  CHECK(r.allocs > 4000);
  CHECK(r.allocs_same == r.allocs);
  CHECK(r.real_segment_events > 0);
  CHECK(r.segment_events_same == r.real_segment_events);
  CHECK(r.model_segment_events == r.real_segment_events);
  CHECK(r.unmatched_frees == 0);
  CHECK(r.identical());
  // The model ends where the real allocator ended, block for block.
  CHECK(same_value(*segments_value(r.segments), *s.root->get("segments")));
}

}  // namespace

TEST_CASE("replay: the shared fixtures replay bit-exactly with default settings", "[replay]") {
  for (const char* v : {"flex_padded", "sdpa_chunked", "sdpa_fused"}) {
    check_exact({fixtures_dir() / (std::string("snap_") + v + "_1.pickle")});
  }
}

TEST_CASE("replay: traces recorded under other settings replay bit-exactly", "[replay]") {
  // Recorded on an H200 by tools/alloc-capture/capture-all.sh; none were used to write the model.
  for (const char* v : {"flex_padded", "sdpa_chunked", "sdpa_fused"}) {
    for (const char* tag : {"_es", "_ms64r4", "_gc06"}) {
      check_exact({traces_dir() / (std::string("snap_") + v + tag + "_1.pickle")});
    }
  }
  check_exact({traces_dir() / "snap_sdpa_chunked_rbrackets_1.pickle"});
  // Garbage collection acts only under a memory fraction (0.0044 of the H200: about 630 MiB).
  check_exact({traces_dir() / "snap_sdpa_chunked_gc06f_1.pickle", 0.0044});
  // empty_cache every 25 iterations, inferred from the trace, with and without expandable segments.
  check_exact({traces_dir() / "snap_sdpa_chunked_empty25_1.pickle"});
  check_exact({traces_dir() / "snap_sdpa_chunked_es_empty25_1.pickle"});
}

TEST_CASE("replay: a wrong setting is visible as differences", "[replay]") {
  const auto path = fixtures_dir() / "snap_sdpa_chunked_1.pickle";
  const Snapshot s = read_snapshot(path);
  ReplayOptions opt;
  opt.config = parse_config("max_split_size_mb:64,roundup_power2_divisions:4");
  const ReplayResult r = replay_trace(s.traces[0], opt);
  CHECK_FALSE(r.identical());
  CHECK(r.allocs_same < r.allocs);
  CHECK_FALSE(r.alloc_mismatches.empty());
  // Without the memory fraction the GC trace's segment frees are unexplained.
  const auto gc = traces_dir() / "snap_sdpa_chunked_gc06f_1.pickle";
  const Snapshot g = read_snapshot(gc);
  ReplayOptions go;
  go.config = config_from_snapshot(g.root->get("allocator_settings"), gc.string());
  CHECK_FALSE(replay_trace(g.traces[0], go).identical());
}

TEST_CASE("report: the fixtures' verdicts match their stats JSON", "[replay]") {
  auto run = [](const std::string& v) {
    const auto path = fixtures_dir() / ("snap_" + v + "_1.pickle");
    const Snapshot s = read_snapshot(path);
    const Boundaries b =
        boundaries_from_stats(s.traces[0], fixtures_dir() / ("stats_" + v + "_1.json"));
    ReplayOptions opt;
    opt.config = config_from_snapshot(s.root->get("allocator_settings"), path.string());
    return analyse(v, s.traces[0], b, opt);
  };
  const StabilityReport flex = run("flex_padded");
  CHECK(flex.stable);
  CHECK(flex.rows.size() == 150);
  CHECK(flex.recorded_matches == 150);
  CHECK(flex.rows.front().at_end.segments == 14);
  CHECK(flex.rows.back().at_end.segments == 14);
  CHECK(flex.verdict ==
        "stable from iteration 0: no device allocation in the 149 iterations after the warm phase "
        "(assumed: iteration 0); 14 segments, reserved 382 MiB");

  const StabilityReport fused = run("sdpa_fused");
  CHECK(fused.stable);
  CHECK(fused.recorded_matches == 150);
  CHECK(fused.rows.back().at_end.segments == 17);

  const StabilityReport chunked = run("sdpa_chunked");
  CHECK_FALSE(chunked.stable);
  CHECK(chunked.recorded_matches == 150);
  CHECK(chunked.growth_at == std::vector<std::string>{"1", "2", "13"});
  CHECK(chunked.verdict ==
        "not stable: device allocations at iterations 1, 2, 13 after the warm phase (assumed: "
        "iteration 0); 18 -> 21 segments, reserved 376 -> 432 MiB; 1: length 2816, no longer than "
        "the 4096 served before: fragmentation; 2: length 3968, no longer than the 4096 served "
        "before: fragmentation; 13: length 2048, no longer than the 4096 served before: "
        "fragmentation");
}

TEST_CASE("replay: traces racelab live alloc recorded through LibTorch's C++ API", "[replay]") {
  // Recorded on the H200 by tools/gpu/run-live.sh (docs/results/live-alloc-h200.md).
  const auto dir = live_traces_dir();
  for (const char* v : {"fused", "chunked", "dense"})
    check_exact({dir / (std::string("snap_live_") + v + "_1.pickle")});
  auto run = [&](const std::string& v) {
    const auto path = dir / ("snap_live_" + v + "_1.pickle");
    const Snapshot s = read_snapshot(path);
    const Boundaries b = boundaries_from_stats(s.traces[0], dir / ("stats_live_" + v + "_1.json"));
    ReplayOptions opt;
    opt.config = config_from_snapshot(s.root->get("allocator_settings"), path.string());
    return analyse(v, s.traces[0], b, opt);
  };
  const StabilityReport fused = run("fused");
  CHECK(fused.stable);
  CHECK(fused.recorded_matches == 150);
  const StabilityReport chunked = run("chunked");
  CHECK_FALSE(chunked.stable);
  CHECK(chunked.recorded_matches == 150);
  CHECK(chunked.verdict ==
        "not stable: device allocations at iterations 2, 5 after the warm phase (assumed: "
        "iteration 0); 20 -> 23 segments, reserved 424 -> 516 MiB; 2: length 3776, no longer than "
        "the 4096 served before: fragmentation; 5: length 3968, no longer than the 4096 served "
        "before: fragmentation");
  const StabilityReport dense = run("dense");
  CHECK(dense.stable);
  CHECK(dense.recorded_matches == 150);
}

TEST_CASE("report: live alloc's report of a capture is alloc report's with the defaults",
          "[replay]") {
  const std::string trace = (fixtures_dir() / "snap_sdpa_chunked_1.pickle").string();
  const TraceReports direct = analyse_traces({trace}, {}, -1, ReportSettings{}, {});
  // The stats JSON beside the trace gives the iterations, as alloc report finds it.
  REQUIRE(direct.reports.size() == 1);
  CHECK(direct.reports[0].iterations);
  CHECK(direct.reports[0].recorded_matches == 150);
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "racelab-test-report-capture";
  std::filesystem::remove_all(dir);
  const TraceReports captured = report_capture(trace, dir, {});
  REQUIRE(captured.reports.size() == 1);
  CHECK(captured.reports[0].verdict == direct.reports[0].verdict);
  CHECK(captured.warnings == direct.warnings);
  CHECK(std::filesystem::exists(dir / "alloc-report.json"));
  CHECK(std::filesystem::exists(dir / "report.html"));
  CHECK(std::filesystem::exists(dir / "sdpa_chunked_1.iterations.csv"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("report: without boundaries the trace is cut into windows of allocations", "[replay]") {
  const auto path = fixtures_dir() / "snap_sdpa_fused_1.pickle";
  const Snapshot s = read_snapshot(path);
  const Boundaries b = boundaries_by_window(s.traces[0], 1000);
  CHECK(b.windows.size() == 5);  // 4540 allocations
  CHECK(b.windows.front().label == "allocs 1-1000");
  CHECK(b.windows.back().label == "allocs 4001-4540");
  CHECK(b.windows.back().end == s.traces[0].size());
  ReplayOptions opt;
  const StabilityReport r = analyse("fused", s.traces[0], b, opt);
  CHECK_FALSE(r.iterations);
  CHECK(r.rows.back().at_end.segments == 17);
}

TEST_CASE("report: START/END annotations mark iterations when no stats JSON is given", "[replay]") {
  const auto path = fixtures_dir() / "snap_sdpa_fused_1.pickle";
  const Snapshot s = read_snapshot(path);
  const auto& t = s.traces[0];
  // Three "iterations" ending at the times of three chosen events.
  std::vector<Annotation> ann;
  const std::size_t ends[] = {t.size() / 4, t.size() / 2, t.size() - 1};
  std::int64_t start = t.front().time_us;
  for (int k = 0; k < 3; ++k) {
    const std::string name = "step " + std::to_string(k);
    ann.push_back({"START", name, 0, start});
    ann.push_back({"END", name, 0, t[ends[k]].time_us});
    start = t[ends[k]].time_us + 1;
  }
  const auto b = boundaries_from_annotations(t, ann);
  REQUIRE(b.has_value());
  REQUIRE(b->windows.size() == 3);
  CHECK(b->windows[0].label == "step 0");
  CHECK(b->windows[2].end == t.size());
  CHECK(b->windows[1].first == b->windows[0].end);
  // One annotation pair is not enough to call them iterations.
  CHECK_FALSE(boundaries_from_annotations(t, {ann[0], ann[1]}).has_value());
}

TEST_CASE("replay: a snapshot of two devices replays each device against its own trace",
          "[replay]") {
  // Device 1 ran the same program as device 0 (the fixture's trace copied), as one drafter per
  // GPU would: every device is replayed, compared and reported on its own.
  const auto path = fixtures_dir() / "snap_sdpa_fused_1.pickle";
  const Snapshot one = read_snapshot(path, SnapshotReader::kTree);  // keeps the events' values
  auto root = PickleValue::new_dict();
  for (const auto& [k, v] : one.root->dict) {
    if (k->s == "device_traces") {
      root->set("device_traces", PickleValue::list({v->items[0], v->items[0]}));
    } else {
      root->set(k->s, v);
    }
  }
  const auto dir = std::filesystem::temp_directory_path() / "racelab-two-devices";
  std::filesystem::create_directories(dir);
  write_snapshot_value(dir / "two.pickle", *root);
  const Snapshot two = read_snapshot(dir / "two.pickle");
  REQUIRE(two.traces.size() == 2);
  const char* bin = std::getenv("RACELAB_BIN");
  REQUIRE(bin != nullptr);
  const std::string out = (dir / "out.txt").string();
  const int status =
      std::system((std::string(bin) + " alloc replay --compare " + (dir / "two.pickle").string() +
                   " --out " + (dir / "replayed").string() + " > " + out + " 2>&1")
                      .c_str());
  CHECK(WEXITSTATUS(status) == 0);
  std::ifstream in(out);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  INFO(text);
  CHECK(text.find(
            "device 0: allocations: 4540/4540 same placement; segment events: 17/17 identical") !=
        std::string::npos);
  CHECK(text.find(
            "device 1: allocations: 4540/4540 same placement; segment events: 17/17 identical") !=
        std::string::npos);
  // The model's snapshot has both devices' traces and segments.
  const Snapshot replayed = read_snapshot(dir / "replayed" / "replay.pickle");
  REQUIRE(replayed.traces.size() == 2);
  CHECK(replayed.traces[1].size() == two.traces[1].size());
  CHECK(replayed.segment_count == 2 * one.segment_count);
}
