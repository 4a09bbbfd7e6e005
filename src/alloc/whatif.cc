#include "alloc/whatif.h"

#include <fmt/format.h>

#include <algorithm>

namespace racelab::alloc {

WhatifLine whatif_line(const std::string& name, const ReplayResult& r, bool expandable) {
  WhatifLine l;
  l.name = name;
  l.peak_reserved = r.peak_reserved;
  l.final_reserved = static_cast<std::uint64_t>(r.stats.reserved_bytes[kAggregate].current);
  l.segments = expandable ? static_cast<std::int64_t>(r.final_mapped_segments)
                          : r.stats.segment[kAggregate].current;
  l.device_allocs = r.stats.num_device_alloc;
  l.retries = r.stats.num_alloc_retries;
  l.ooms = r.model_ooms;
  if (!r.oom_messages.empty()) {
    l.first_oom = fmt::format("first out of memory at trace event {}: {}", r.first_oom_event,
                              r.oom_messages.front());
  }
  l.samples = r.samples;
  return l;
}

std::vector<std::size_t> whatif_sample_points(std::size_t events, std::size_t points) {
  std::vector<std::size_t> at;
  if (events == 0 || points == 0) return at;
  const std::size_t n = std::min(events, points);
  for (std::size_t k = 1; k <= n; ++k) at.push_back(k * events / n - 1);
  return at;
}

}  // namespace racelab::alloc
