// The warm phase and the stability verdict built on it (alloc/warm_phase.h): growth while each
// optimizer takes its first step and while the drafters first run at once is expected; growth
// after it is not stable, with why; too short a run is not measured.
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "alloc/report.h"
#include "alloc/runs.h"
#include "alloc/warm_phase.h"
#include "alloc_data.h"
#include "catch.h"
#include "util/errors.h"
#include "util/files.h"

using namespace racelab::alloc;
using racelab::alloc::testing::fixtures_dir;
using racelab::alloc::testing::traces_dir;

namespace {

constexpr std::uint64_t kMiB = 1 << 20;

// Threads as racelab's capture numbers them, by their first step.
const Step kMainA{0, "AdamW", "MainThread", 0, true};
const Step kMainB{1, "AdamW", "MainThread", 0, true};

Step step(std::int64_t optimizer, const std::string& thread, std::int64_t number, bool first) {
  return {optimizer, "AdamW", thread, number, first};
}

std::vector<std::string> labels(std::size_t n) {
  std::vector<std::string> out;
  for (std::size_t k = 0; k < n; ++k) out.push_back(std::to_string(k));
  return out;
}

// Two drafters (threads 1 and 2, optimizers 0 and 1) after a main thread warmed both optimizers
// up: the user's pipeline of issue 36 (14 iterations: 2 warmup steps, then 6 steps each).
std::vector<std::vector<Step>> main_warms_two_drafters() {
  std::vector<std::vector<Step>> rows = {{kMainA}, {kMainB}};
  for (int k = 0; k < 6; ++k) {
    rows.push_back({step(0, "drafter 0.0", 1, false)});
    rows.push_back({step(1, "drafter 0.1", 2, false)});
  }
  return rows;
}

// A fake device that records a memory_viz trace as PyTorch's allocator would for requests of
// whole 2 MiB multiples above 10 MiB that never share a segment (each size reused exactly), and
// the stats JSON rows racelab's capture writes (version 2: with each row's steps).
struct FakeDevice {
  std::vector<TraceEvent> trace;
  nlohmann::json rows = nlohmann::json::array();
  std::int64_t t = 1'000'000;
  std::int64_t row_start = 1'000'000;
  std::uint64_t next_addr = 0x7f0000000000;
  std::map<std::uint64_t, std::vector<std::uint64_t>> cached;  // size -> free segments
  std::int64_t reserved = 0, allocated = 0, segments = 0;

  std::uint64_t alloc(std::uint64_t mib) {
    const std::uint64_t size = mib * kMiB;
    std::uint64_t addr = 0;
    if (auto& c = cached[size]; !c.empty()) {
      addr = c.back();
      c.pop_back();
    } else {
      addr = next_addr;
      next_addr += size + 2 * kMiB;
      trace.push_back({Action::kSegmentAlloc, addr, size, 0, t++});
      reserved += static_cast<std::int64_t>(size);
      ++segments;
    }
    trace.push_back({Action::kAlloc, addr, size, 0, t++});
    allocated += static_cast<std::int64_t>(size);
    return addr;
  }
  void free(std::uint64_t addr, std::uint64_t mib) {
    const std::uint64_t size = mib * kMiB;
    trace.push_back({Action::kFreeRequested, addr, size, 0, t++});
    trace.push_back({Action::kFreeCompleted, addr, size, 0, t++});
    cached[size].push_back(addr);
    allocated -= static_cast<std::int64_t>(size);
  }
  // An optimizer step ends the iteration (the capture's boundary).
  std::optional<std::int64_t> warmup_length;  // the fixtures' "warmup": {"L"}
  void end_row(const std::vector<Step>& steps, std::optional<std::int64_t> length = {}) {
    nlohmann::json s = nlohmann::json::array();
    for (const Step& x : steps)
      s.push_back({{"optimizer", x.optimizer},
                   {"class", x.optimizer_class},
                   {"thread", x.thread},
                   {"thread_number", x.thread_number},
                   {"first", x.first}});
    rows.push_back({{"iter", rows.size()},
                    {"t_start_us", row_start},
                    {"t_end_us", t},
                    {"reserved", reserved},
                    {"allocated", allocated},
                    {"segments", segments},
                    {"device_allocs", segments},
                    {"steps", s}});
    if (length) rows.back()["L"] = *length;
    row_start = ++t;
  }
  StabilityReport report(const std::string& name, int version = 2,
                         std::optional<std::size_t> settle = std::nullopt) const {
    const auto dir = std::filesystem::temp_directory_path() / "racelab-test-warm-phase";
    std::filesystem::create_directories(dir);
    const auto path = dir / ("stats_" + name + ".json");
    nlohmann::json j = {{"format", "racelab-alloc-stats"}, {"version", version}, {"rows", rows}};
    if (warmup_length) j["warmup"] = {{"L", *warmup_length}};
    racelab::write_file_atomic(path, j.dump());
    const Boundaries b = boundaries_from_stats(trace, path);
    std::filesystem::remove(path);
    return analyse(name, trace, b, ReplayOptions{}, settle);
  }
};

// The user's pipeline: weights of two drafters (12 MiB each), main warms each up (activation 14
// MiB; AdamW's state, 2 x 16 MiB, at its first step), then the two drafter threads run at once
// (two activations alive together: a second 14 MiB segment), then 10 more steps from the cache.
// `late_mib`: an activation of that size at iteration 10 (a new shape after the warm phase).
FakeDevice two_drafter_pipeline(std::uint64_t late_mib = 0) {
  FakeDevice d;
  d.alloc(12);
  d.alloc(12);
  for (int opt = 0; opt < 2; ++opt) {  // main's sequential warmup
    d.free(d.alloc(14), 14);
    d.alloc(16);
    d.alloc(16);
    d.end_row({opt == 0 ? kMainA : kMainB});
  }
  // The first step with both drafters running: both activations alive at once.
  const std::uint64_t a0 = d.alloc(14);
  const std::uint64_t a1 = d.alloc(14);
  d.free(a0, 14);
  d.end_row({step(0, "drafter 0.0", 1, false)});
  d.free(a1, 14);
  d.end_row({step(1, "drafter 0.1", 2, false)});
  for (int k = 4; k < 14; ++k) {
    const std::uint64_t mib = k == 10 && late_mib ? late_mib : 14;
    d.free(d.alloc(mib), mib);
    d.end_row({step(k % 2, k % 2 ? "drafter 0.1" : "drafter 0.0", 1 + k % 2, false)});
  }
  return d;
}

}  // namespace

TEST_CASE("warm phase: a main-thread warmup of two drafters, then both drafters at once",
          "[warm]") {
  const auto rows = main_warms_two_drafters();
  const WarmPhase w = find_warm_phase(rows, labels(rows.size()), "iteration", "", std::nullopt);
  CHECK(w.source == WarmPhase::Source::kCapture);
  CHECK(w.drafters == 2);  // main only took first steps: it warmed the optimizers up for others
  CHECK(w.ended);
  // The last drafter's first step is iteration 3; each drafter's next (4, 5) runs with both.
  CHECK(w.rows == 6);
  CHECK(w.text == "iterations 0-5");
  REQUIRE(w.reasons.size() == 6);
  CHECK(w.reasons[0] == "first step of optimizer 0 (AdamW, thread MainThread)");
  CHECK(w.reasons[1] == "first step of optimizer 1 (AdamW, thread MainThread)");
  CHECK(w.reasons[2] == "the 2 drafters starting");
  CHECK(w.reasons[5] == "the first step with all 2 drafters running");
}

TEST_CASE("warm phase: each drafter warms itself up in turn, then they run at once", "[warm]") {
  // Thread 1 warms optimizer 0 up while thread 2 waits, then the reverse, then both run.
  std::vector<std::vector<Step>> rows = {{step(0, "a", 1, true)}, {step(1, "b", 2, true)}};
  for (int k = 0; k < 8; ++k) rows.push_back({step(k % 2, k % 2 ? "b" : "a", 1 + k % 2, false)});
  const WarmPhase w = find_warm_phase(rows, labels(rows.size()), "iteration", "", std::nullopt);
  // The warmups ran alone; iterations 2 and 3 are the first with both running.
  CHECK(w.rows == 4);
  CHECK(w.reasons[3] == "the first step with all 2 drafters running");
}

TEST_CASE(
    "warm phase: train_queue_torch.py's main warmup, then drafters with optimizers of "
    "their own",
    "[warm]") {
  // On the H200 (docs/results/check-h200, flex, sequential warmup) this run grew at iterations 1
  // and 3: the first drafter's AdamW state, and the second drafter's second step.
  std::vector<std::vector<Step>> rows = {{step(0, "MainThread", 0, true)},
                                         {step(1, "drafter 0.0", 1, true)},
                                         {step(2, "drafter 0.1", 2, true)}};
  for (int k = 0; k < 46; ++k)
    rows.push_back({step(1 + k % 2, k % 2 ? "drafter 0.1" : "drafter 0.0", 1 + k % 2, false)});
  const WarmPhase w = find_warm_phase(rows, labels(rows.size()), "iteration", "", std::nullopt);
  CHECK(w.rows == 5);
  CHECK(w.reasons[1] == "first step of optimizer 1 (AdamW, thread drafter 0.0)");
  CHECK(w.reasons[3] == "the first step with all 2 drafters running");
}

TEST_CASE("warm phase: a single-thread loop warms up in its first iteration", "[warm]") {
  std::vector<std::vector<Step>> rows = {{step(0, "MainThread", 0, true)}};
  for (int k = 0; k < 5; ++k) rows.push_back({step(0, "MainThread", 0, false)});
  const WarmPhase w = find_warm_phase(rows, labels(rows.size()), "iteration", "", std::nullopt);
  CHECK(w.rows == 1);
  CHECK(w.drafters == 1);
  CHECK(w.text == "iteration 0");
}

TEST_CASE("warm phase: a run that ends before every drafter ran with all of them is all warm",
          "[warm]") {
  // Drafter b's first step is the last iteration: nobody steps after it.
  std::vector<std::vector<Step>> rows = {{step(0, "a", 1, true)},
                                         {step(0, "a", 1, false)},
                                         {step(1, "b", 2, true)},
                                         {step(1, "b", 2, false)}};
  const WarmPhase w = find_warm_phase(rows, labels(rows.size()), "iteration", "", std::nullopt);
  CHECK_FALSE(w.ended);
  CHECK(w.rows == 4);
  CHECK(w.description.find("a took no step after iteration 2") != std::string::npos);
}

TEST_CASE("warm phase: assumed where the steps are unknown; --settle overrides", "[warm]") {
  const auto rows = main_warms_two_drafters();
  const WarmPhase a =
      find_warm_phase({}, labels(14), "iteration", "s.json does not record", std::nullopt);
  CHECK(a.source == WarmPhase::Source::kAssumed);
  CHECK(a.rows == 1);
  CHECK(a.text == "assumed: iteration 0");
  CHECK(a.description.find("s.json does not record") != std::string::npos);
  const WarmPhase s = find_warm_phase(rows, labels(14), "iteration", "", 3);
  CHECK(s.source == WarmPhase::Source::kSettle);
  CHECK(s.rows == 3);
  CHECK(s.text == "--settle 3: iterations 0-2");
}

TEST_CASE("report: the two-drafter pipeline is stable from the first step with both running",
          "[warm]") {
  const StabilityReport r = two_drafter_pipeline().report("two_drafters");
  REQUIRE(r.rows.size() == 14);
  CHECK(r.recorded_matches == 14);  // the fake device is the model's allocator
  std::vector<std::int64_t> segments;
  for (const Row& row : r.rows) segments.push_back(row.at_end.segments);
  CHECK(segments == std::vector<std::int64_t>{5, 7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8});
  CHECK(r.stable);
  CHECK(r.measured);
  CHECK(r.stable_from == 2);
  CHECK(r.after_warm == 8);
  CHECK(r.growth_at.empty());
  REQUIRE(r.growth.size() == 3);
  CHECK(r.growth[1].reason == "first step of optimizer 1 (AdamW, thread MainThread)");
  CHECK(r.growth[2].reason == "the 2 drafters starting");
  CHECK(r.verdict ==
        "stable from iteration 2: no device allocation in the 8 iterations after the warm phase "
        "(iterations 0-5); 8 segments, reserved 116 MiB; grew in the warm phase at 0: first step "
        "of optimizer 0 (AdamW, thread MainThread); 1: first step of optimizer 1 (AdamW, thread "
        "MainThread); 2: the 2 drafters starting");
  CHECK(std::string(stability_name(r)) == "stable");
}

TEST_CASE("report: growth after the warm phase is not stable, however flat the rest", "[warm]") {
  const StabilityReport r = two_drafter_pipeline(30).report("late");
  CHECK_FALSE(r.stable);
  CHECK(r.measured);
  CHECK(r.growth_at == std::vector<std::string>{"10"});
  CHECK(r.verdict ==
        "not stable: device allocations at iteration 10 after the warm phase (iterations 0-5); 5 "
        "-> 9 segments, reserved 70 -> 146 MiB; 10: a larger working set: 118 MiB allocated at "
        "its peak, above the 116 MiB before (a new shape, or the 2 drafters' peaks meeting for "
        "the first time); grew in the warm phase at 0: first step of "
        "optimizer 0 (AdamW, thread MainThread); 1: first step of optimizer 1 (AdamW, thread "
        "MainThread); 2: the 2 drafters starting");
  CHECK(std::string(stability_name(r)) == "unstable");
}

TEST_CASE("report: without the capture's steps the warm phase is assumed, and said", "[warm]") {
  // The same run's stats as a version 1 capture: iteration 0 is assumed, and the drafters'
  // growth at 1 and 2 counts (the false alarm of issue 36, which the steps remove).
  const StabilityReport r = two_drafter_pipeline().report("v1", 1);
  CHECK_FALSE(r.stable);
  CHECK(r.growth_at == std::vector<std::string>{"1", "2"});
  CHECK(r.warm.source == WarmPhase::Source::kAssumed);
  CHECK(r.verdict.find("after the warm phase (assumed: iteration 0)") != std::string::npos);
  CHECK(r.warm.description.find("is a capture of version 1, which did not record") !=
        std::string::npos);
  // --settle stays the user's override.
  const StabilityReport s = two_drafter_pipeline().report("v1", 1, 3);
  CHECK(s.stable);
  CHECK(s.verdict.rfind("stable from iteration 2: no device allocation in the 11 iterations after "
                        "the warm phase (--settle 3: iterations 0-2)",
                        0) == 0);
}

TEST_CASE("report: a 3-iteration run is not measured; growth in it still is not stable", "[warm]") {
  FakeDevice d;
  d.alloc(12);
  d.free(d.alloc(14), 14);
  d.end_row({step(0, "MainThread", 0, true)});
  for (int k = 0; k < 2; ++k) {
    d.free(d.alloc(14), 14);
    d.end_row({step(0, "MainThread", 0, false)});
  }
  const StabilityReport r = d.report("short");
  CHECK_FALSE(r.stable);
  CHECK_FALSE(r.measured);
  CHECK(std::string(stability_name(r)) == "not_measured");
  CHECK(r.verdict ==
        "not measured: too few iterations after the warm phase (iteration 0): 2, at least 3 "
        "needed; 2 segments, reserved 26 MiB; grew in the warm phase at 0: first step of "
        "optimizer 0 (AdamW, thread MainThread)");
  d.free(d.alloc(20), 20);
  d.end_row({step(0, "MainThread", 0, false)});
  const StabilityReport g = d.report("short-growing");
  CHECK(g.measured);
  CHECK_FALSE(g.stable);
  CHECK(g.growth_at == std::vector<std::string>{"3"});
}

TEST_CASE("report: a stats JSON of a newer capture version is refused", "[warm]") {
  FakeDevice d;
  d.free(d.alloc(14), 14);
  d.end_row({kMainA});
  CHECK_THROWS_AS(d.report("v3", 3), racelab::InputError);
  // A version 2 row without its steps is malformed.
  d.rows[0].erase("steps");
  try {
    d.report("nosteps", 2);
    FAIL("a version 2 row without steps was accepted");
  } catch (const racelab::InputError& e) {
    CHECK(std::string(e.what()).find("rows[0]: missing list 'steps'") != std::string::npos);
  }
}

TEST_CASE("report: the H200 fixtures: chunked grows late from fragmentation, the others settle",
          "[warm]") {
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
  CHECK(flex.warm.source == WarmPhase::Source::kAssumed);
  CHECK(flex.after_warm == 149);
  const StabilityReport fused = run("sdpa_fused");
  CHECK(fused.stable);
  const StabilityReport chunked = run("sdpa_chunked");
  CHECK_FALSE(chunked.stable);
  CHECK(chunked.measured);
  CHECK(chunked.growth_at == std::vector<std::string>{"1", "2", "13"});
  // The last growth, at a length shorter than the warmup's 4096: fragmentation.
  REQUIRE(chunked.growth.size() >= 3);
  CHECK(chunked.growth.back().label == "13");
  CHECK(chunked.growth.back().reason ==
        "length 2048, no longer than the 4096 served before: fragmentation");
}

TEST_CASE("report: growth after the warm phase says whether the length was new", "[warm]") {
  // A single-thread loop over lengths (the fixtures' "L"), warmed up at 2048: a longer batch that
  // needs a bigger activation is a new length; a shorter one that still allocates (here a 20 MiB
  // request the cached 14 and 18 MiB blocks cannot hold) is fragmentation.
  FakeDevice d;
  d.warmup_length = 2048;
  d.alloc(12);
  d.free(d.alloc(14), 14);
  d.end_row({step(0, "main", 0, true)}, 1024);
  const std::int64_t lengths[] = {2048, 1024, 4096, 1536, 1024, 1024};
  const std::uint64_t sizes[] = {14, 14, 18, 20, 14, 14};
  for (int k = 0; k < 6; ++k) {
    d.free(d.alloc(sizes[k]), sizes[k]);
    d.end_row({step(0, "main", 0, false)}, lengths[k]);
  }
  const StabilityReport r = d.report("lengths");
  CHECK_FALSE(r.stable);
  CHECK(r.growth_at == std::vector<std::string>{"3", "4"});
  REQUIRE(r.growth.size() == 3);
  CHECK(r.growth[1].reason == "a new length 4096, longer than the 2048 served before");
  CHECK(r.growth[2].reason == "length 1536, no longer than the 4096 served before: fragmentation");
}

TEST_CASE("report: every H200 chunked trace grows late (iteration 13); flex and fused settle",
          "[warm]") {
  // Recorded under other allocator settings (tools/alloc-capture/capture-all.sh); without the
  // capture's steps the warm phase is assumed to be iteration 0, as the fixtures' README says.
  auto report = [](const std::filesystem::path& p) {
    const TraceReports got = analyse_traces({p.string()}, {}, -1, ReportSettings{}, {});
    REQUIRE(got.reports.size() == 1);
    return got.reports[0];
  };
  for (const auto& p : {fixtures_dir() / "snap_sdpa_chunked_1.pickle",
                        traces_dir() / "snap_sdpa_chunked_es_1.pickle",
                        traces_dir() / "snap_sdpa_chunked_gc06_1.pickle",
                        traces_dir() / "snap_sdpa_chunked_ms64r4_1.pickle",
                        traces_dir() / "snap_sdpa_chunked_rbrackets_1.pickle"}) {
    INFO(p.string());
    const StabilityReport r = report(p);
    CHECK(r.measured);
    CHECK_FALSE(r.stable);
    REQUIRE_FALSE(r.growth_at.empty());
    CHECK(r.growth_at.back() == "13");
    CHECK(r.verdict.find("13: length 2048, no longer than the 4096 served before: fragmentation") !=
          std::string::npos);
  }
  for (const auto& p :
       {fixtures_dir() / "snap_flex_padded_1.pickle", fixtures_dir() / "snap_sdpa_fused_1.pickle",
        traces_dir() / "snap_flex_padded_es_1.pickle",
        traces_dir() / "snap_flex_padded_gc06_1.pickle",
        traces_dir() / "snap_flex_padded_ms64r4_1.pickle",
        traces_dir() / "snap_sdpa_fused_gc06_1.pickle",
        traces_dir() / "snap_sdpa_fused_ms64r4_1.pickle"}) {
    INFO(p.string());
    const StabilityReport r = report(p);
    CHECK(r.stable);
    CHECK(r.after_warm == 149);
    CHECK(r.verdict.find("after the warm phase (assumed: iteration 0)") != std::string::npos);
  }
}

TEST_CASE("warm phase: the H200 captures of train_queue_torch.py (docs/results/warm-phase-h200)",
          "[warm]") {
  // racelab live python --uncontrolled --alloc on torch 2.11: main's warmup optimizer, then two
  // queue-fed drafters with optimizers of their own.
  const char* src = std::getenv("RACELAB_SOURCE_DIR");
  REQUIRE(src != nullptr);
  auto phase = [&](const std::string& run) {
    const auto path =
        std::filesystem::path(src) / "docs/results/warm-phase-h200" / (run + ".stats.json");
    const auto j = nlohmann::json::parse(racelab::read_file(path));
    std::vector<std::vector<Step>> rows;
    for (const auto& row : j["rows"]) {
      rows.emplace_back();
      for (const auto& s : row["steps"])
        rows.back().push_back(
            {s["optimizer"], s["class"], s["thread"], s["thread_number"], s["first"]});
    }
    return find_warm_phase(rows, labels(rows.size()), "iteration", "", std::nullopt);
  };
  // flex padded: both drafters step in lock-step from iteration 1.
  const WarmPhase flex = phase("flex_compiled-48");
  CHECK(flex.rows == 5);
  CHECK(flex.drafters == 2);
  CHECK(flex.reasons[0] == "first step of optimizer 0 (AdamW, thread main)");
  // chunked: drafter 0.0 took two steps before drafter 0.1's first (iteration 3).
  const WarmPhase chunked = phase("sdpa_chunked-48");
  CHECK(chunked.rows == 8);
  CHECK(chunked.reasons[2] == "the 2 drafters starting");
  // Two batches: each drafter's optimizer stepped once; nobody took a training step.
  const WarmPhase two = phase("flex_compiled-2");
  CHECK(two.rows == 3);
  CHECK(two.drafters == 0);
}
