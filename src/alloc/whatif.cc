#include "alloc/whatif.h"

#include <fmt/format.h>

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
  return l;
}

}  // namespace racelab::alloc
