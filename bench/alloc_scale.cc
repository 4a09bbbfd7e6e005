// Replay rate and memory on a synthetic trace of N events (default 10 million): a training loop
// whose iterations allocate activations of varying length, free most of them in reverse order and
// keep a few across iterations, like the fixtures' drafter step. Prints events/s and peak RSS.
//   racelab_alloc_scale [EVENTS]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "alloc/replay.h"
#include "util/rng.h"

using namespace racelab::alloc;

namespace {

long peak_rss_kb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return -1;
}

std::vector<TraceEvent> synthetic(std::size_t events) {
  std::vector<TraceEvent> t;
  t.reserve(events + 64);
  racelab::Rng rng(1);
  std::uint64_t next_addr =
      0x100000000ULL;  // distinct fake addresses; replay only needs them unique
  std::vector<std::uint64_t> kept;
  std::int64_t time = 0;
  while (t.size() < events) {
    const std::uint64_t len = 512 + 64 * rng.below(57);  // sequence length 512..4096
    std::vector<std::pair<std::uint64_t, std::uint64_t>> step;
    const int tensors = 20 + static_cast<int>(rng.below(20));
    for (int k = 0; k < tensors && t.size() < events; ++k) {
      const std::uint64_t size = len * (k % 5 == 0   ? 8192
                                        : k % 3 == 0 ? 256
                                                     : 4096) +
                                 rng.below(4) * 512;
      const std::uint64_t addr = next_addr;
      next_addr += 1 << 20;
      t.push_back({Action::kAlloc, addr, size, 0, ++time});
      step.emplace_back(addr, size);
    }
    for (auto it = step.rbegin(); it != step.rend() && t.size() + 2 <= events; ++it) {
      if (rng.below(16) == 0) {
        kept.push_back(it->first);
        continue;
      }
      t.push_back({Action::kFreeRequested, it->first, it->second, 0, ++time});
      t.push_back({Action::kFreeCompleted, it->first, it->second, 0, ++time});
    }
    while (kept.size() > 8 && t.size() + 2 <= events) {
      t.push_back({Action::kFreeRequested, kept.front(), 0, 0, ++time});
      t.push_back({Action::kFreeCompleted, kept.front(), 0, 0, ++time});
      kept.erase(kept.begin());
    }
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 10'000'000;
  const long rss0 = peak_rss_kb();
  const auto trace = synthetic(n);
  const long rss_trace = peak_rss_kb();
  ReplayOptions opt;  // default settings, synthetic addresses
  opt.real_addresses = false;
  const auto t0 = std::chrono::steady_clock::now();
  const ReplayResult r = replay_trace(trace, opt);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "events %zu allocations %zu replay %.3f s (%.2f million events/s) peak RSS %ld KB (trace in "
      "memory %ld KB, "
      "before %ld KB) reserved %.0f MiB segments %lld\n",
      trace.size(), r.allocs, s, static_cast<double>(trace.size()) / s / 1e6, peak_rss_kb(),
      rss_trace - rss0, rss0, static_cast<double>(r.peak_reserved) / (1 << 20),
      static_cast<long long>(r.stats.segment[kAggregate].current));
  return 0;
}
