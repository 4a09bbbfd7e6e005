// Allocator hot paths: a malloc/free pair in the model, and replaying a real H200 trace (the
// pickle parsed once, outside the timing).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>

#include "alloc/allocator.h"
#include "alloc/replay.h"
#include "alloc/snapshot.h"

using namespace racelab::alloc;

namespace {

void BM_AllocMallocFree(benchmark::State& state) {
  CachingAllocator m{Config{}};
  // A warm cache with a few dozen blocks of mixed sizes, like a training step's steady state.
  std::vector<Block*> live;
  for (int k = 0; k < 40; ++k)
    live.push_back(m.malloc(static_cast<std::uint64_t>((k % 7 + 1) * 3 << 20), 0).block);
  for (std::size_t k = 0; k < live.size(); k += 2) m.free(live[k]);
  std::uint64_t size = 4 << 20;
  for (auto _ : state) {
    Block* b = m.malloc(size, 0).block;
    m.free(b);
    size = size == (4 << 20) ? (512 << 10) : (4 << 20);
  }
  state.SetItemsProcessed(state.iterations() * 2);
}
BENCHMARK(BM_AllocMallocFree);

void BM_AllocReplayFixture(benchmark::State& state) {
  const char* data = std::getenv("RACELAB_ALLOC_DATA");
  const std::filesystem::path path =
      std::filesystem::path(data ? data : "build/ci/tests/data/alloc") /
      "fixtures-h200/snap_sdpa_chunked_1.pickle";
  if (!std::filesystem::exists(path)) {
    state.SkipWithError("fixture not unpacked: set RACELAB_ALLOC_DATA");
    return;
  }
  const Snapshot s = read_snapshot(path);
  ReplayOptions opt;
  opt.config = config_from_snapshot(s.root->get("allocator_settings"), path.string());
  std::size_t events = 0;
  for (auto _ : state) {
    ReplayResult r = replay_trace(s.traces[0], opt);
    events += r.events;
    benchmark::DoNotOptimize(r.allocs_same);
  }
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_AllocReplayFixture)->Unit(benchmark::kMillisecond);

}  // namespace
