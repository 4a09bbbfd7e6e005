// Growth attributed to code: what the cache held when an allocation went to the device (the
// model's CacheMiss), the call site of each such allocation, and alloc diff's sides.
#include <algorithm>

#include "alloc/attribution.h"
#include "alloc/diff.h"
#include "alloc/replay.h"
#include "alloc/runs.h"
#include "alloc_data.h"
#include "catch.h"

using namespace racelab::alloc;

namespace {

constexpr std::uint64_t MiB = 1 << 20;

TraceEvent alloc_at(std::uint64_t addr, std::uint64_t size, std::int32_t stack) {
  TraceEvent e;
  e.action = Action::kAlloc;
  e.addr = addr;
  e.size = size;
  e.stack = stack;
  return e;
}

TraceEvent free_event(Action action, std::uint64_t addr, std::uint64_t size) {
  TraceEvent e;
  e.action = action;
  e.addr = addr;
  e.size = size;
  return e;
}

Stack stack_of(std::initializer_list<Frame> frames) { return Stack(frames); }

}  // namespace

TEST_CASE("a request that no one free block fits, though the free bytes would, is fragmentation",
          "[attribution]") {
  // Two 12 MiB segments, both freed, then 20 MiB: 24 MiB free across 2 segments, the largest 12.
  std::vector<TraceEvent> trace = {alloc_at(0x1000000, 12 * MiB, 0),
                                   alloc_at(0x3000000, 12 * MiB, 0)};
  for (std::uint64_t addr : {0x1000000, 0x3000000}) {
    trace.push_back(free_event(Action::kFreeRequested, addr, 12 * MiB));
    trace.push_back(free_event(Action::kFreeCompleted, addr, 12 * MiB));
  }
  trace.push_back(alloc_at(0x5000000, 20 * MiB, 1));
  trace.push_back(alloc_at(0x7000000, 40 * MiB, 2));
  ReplayOptions opt;
  opt.real_addresses = false;
  const ReplayResult r = replay_trace(trace, opt);
  REQUIRE(r.causes.size() == 4);
  CHECK(r.causes[0].miss.free_blocks == 0);
  const DeviceAllocCause& frag = r.causes[2];
  CHECK(frag.event == 6);
  CHECK(frag.requested == 20 * MiB);
  CHECK(frag.stack == 1);
  CHECK(frag.miss.free_bytes == 24 * MiB);
  CHECK(frag.miss.free_blocks == 2);
  CHECK(frag.miss.free_segments == 2);
  CHECK(frag.miss.largest_free == 12 * MiB);
  CHECK(frag.miss.fragmentation());
  CHECK(std::string(cause_kind(frag.miss)) == "fragmentation");
  CHECK(describe_cause(frag) ==
        "alloc of 20.00 MiB (large pool, stream 0): no free block of 20.00 MiB; 24.00 MiB free "
        "in 2 blocks across 2 segments, the largest 12.00 MiB: fragmentation; 1 device "
        "allocation of 20.00 MiB");
  // 40 MiB with 24 MiB cached: the cache held too little, not fragmentation.
  CHECK_FALSE(r.causes[3].miss.fragmentation());
  CHECK(std::string(cause_kind(r.causes[3].miss)) == "cache too small");
}

TEST_CASE("a call site is the innermost frame outside torch, grouped with counts",
          "[attribution]") {
  const std::vector<Stack> stacks = {
      stack_of({{"/usr/lib/python3/site-packages/torch/nn/functional.py", 10, "linear"},
                {"/home/u/proj/model.py", 42, "forward"},
                {"/home/u/proj/train.py", 7, "<module>"}}),
      stack_of({{"/tmp/torchinductor_u/ab/cab.py", 3, "call"},
                {"/home/u/proj/model.py", 42, "forward"},
                {"/home/u/proj/loop.py", 9, "step"}}),
      stack_of({{"/usr/lib/python3/site-packages/torch/_tensor.py", 1, "backward"}}),
  };
  std::vector<DeviceAllocCause> causes(4);
  causes[0].requested = 2 * MiB;
  causes[0].stack = 0;
  causes[1].requested = 4 * MiB;
  causes[1].stack = 1;
  causes[2].requested = 8 * MiB;
  causes[2].stack = 2;
  causes[3].requested = 1 * MiB;
  causes[3].stack = -1;
  const std::vector<CallSite> sites = call_sites(causes, stacks);
  REQUIRE(sites.size() == 3);
  CHECK(sites[0].where == "proj/model.py:42 in forward");
  CHECK(sites[0].count == 2);
  CHECK(sites[0].bytes == 6 * MiB);
  CHECK(sites[0].callers == std::vector<std::string>{"proj/train.py:7 in <module>"});
  CHECK(sites[1].where == "torch only (no frame outside torch)");
  CHECK(sites[2].where == kNoStack);
}

TEST_CASE("alloc diff names the side that grew after its warm phase and its call site",
          "[attribution]") {
  const std::vector<Stack> stacks = {stack_of({{"/p/train.py", 5, "attention"}}),
                                     stack_of({{"/p/train.py", 9, "mlp"}})};
  auto segment = [](std::uint64_t size) {
    Segment s;
    s.total_size = size;
    return s;
  };
  DiffSide a, b;
  a.name = "stable";
  a.segments = {segment(20 * MiB), segment(20 * MiB)};
  a.causes.resize(2);
  a.causes[0].stack = 1;
  a.causes[0].requested = 12 * MiB;
  a.causes[1].stack = 1;
  a.causes[1].requested = 12 * MiB;
  a.stacks = stacks;
  a.frames = true;
  b = a;
  b.name = "growing";
  b.segments.push_back(segment(28 * MiB));
  DeviceAllocCause late;
  late.stack = 0;
  late.requested = 28 * MiB;
  b.causes.push_back(late);
  b.growth_at = {"13"};
  b.late_sites = call_sites({late}, stacks);
  const MemoryDiff d = diff_sides(a, b);
  CHECK(d.grew == "growing");
  CHECK(d.summary ==
        "growing grew against stable: 3 segments, 68 MiB reserved against 2, 40 MiB (+1, +28 "
        "MiB); it grew after its warm phase at 13, from p/train.py:5 in attention (1 allocation)");
  REQUIRE(d.pools.size() == 2);
  CHECK(d.pools[0].added == std::vector<std::uint64_t>{28 * MiB});
  CHECK(d.pools[0].removed.empty());
  REQUIRE(d.sites.size() == 1);
  CHECK(d.sites[0].where == "p/train.py:5 in attention");
  CHECK(d.sites[0].count_a == 0);
  CHECK(d.sites[0].count_b == 1);
  // Swapped, the same side grew.
  CHECK(diff_sides(b, a).grew == "growing");
}

TEST_CASE("on the H200, chunked SDPA's late growth is chunked_attention's mask; flex has none",
          "[attribution]") {
  const auto dir = testing::frames_traces_dir();
  const TraceReports got = analyse_traces({(dir / "snap_tq_sdpa_chunked.pickle").string(),
                                           (dir / "snap_tq_flex_compiled_r2.pickle").string()},
                                          {}, -1, ReportSettings{}, {});
  REQUIRE(got.reports.size() == 2);
  const StabilityReport& chunked = got.reports[0];
  CHECK(chunked.frames);
  CHECK(chunked.growth_at == std::vector<std::string>{"42"});
  const auto late = std::find_if(chunked.growth.begin(), chunked.growth.end(),
                                 [](const Growth& g) { return !g.warm; });
  REQUIRE(late != chunked.growth.end());
  REQUIRE(late->causes.size() == 1);
  CHECK(late->causes[0].miss.small_pool);
  CHECK(late->causes[0].miss.fragmentation());
  REQUIRE(late->sites.size() == 1);
  CHECK(late->sites[0].where == "pipelines/train_queue_torch.py:79 in chunked_attention");
  const StabilityReport& flex = got.reports[1];
  CHECK(flex.stable);
  CHECK(std::none_of(flex.growth.begin(), flex.growth.end(),
                     [](const Growth& g) { return !g.warm; }));
  CHECK(growth_lines(flex).empty());
}
