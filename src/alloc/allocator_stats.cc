// The allocator's statistics: the current/peak/allocated/freed counters, kept per pool type
// (all, small_pool, large_pool) as PyTorch's DeviceStats, and their torch.cuda.memory_stats() form.
#include <fmt/format.h>

#include "alloc/allocator.h"

namespace racelab::alloc {

nlohmann::ordered_json memory_stats_json(const Stats& s) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  auto put_array = [&](const char* name, const StatArray& a) {
    static const char* kTypes[] = {"all", "small_pool", "large_pool"};
    for (std::size_t t = 0; t < 3; ++t) {
      j[fmt::format("{}.{}.current", name, kTypes[t])] = a[t].current;
      j[fmt::format("{}.{}.peak", name, kTypes[t])] = a[t].peak;
      j[fmt::format("{}.{}.allocated", name, kTypes[t])] = a[t].allocated;
      j[fmt::format("{}.{}.freed", name, kTypes[t])] = a[t].freed;
    }
  };
  put_array("active", s.active);
  put_array("active_bytes", s.active_bytes);
  put_array("allocated_bytes", s.allocated_bytes);
  put_array("allocation", s.allocation);
  put_array("inactive_split", s.inactive_split);
  put_array("inactive_split_bytes", s.inactive_split_bytes);
  j["max_split_size"] = s.max_split_size;
  j["num_alloc_retries"] = s.num_alloc_retries;
  j["num_device_alloc"] = s.num_device_alloc;
  j["num_device_free"] = s.num_device_free;
  j["num_ooms"] = s.num_ooms;
  j["num_sync_all_streams"] = s.num_sync_all_streams;
  auto put_one = [&](const char* name, const Stat& st) {
    j[fmt::format("{}.current", name)] = st.current;
    j[fmt::format("{}.peak", name)] = st.peak;
    j[fmt::format("{}.allocated", name)] = st.allocated;
    j[fmt::format("{}.freed", name)] = st.freed;
  };
  put_one("oversize_allocations", s.oversize_allocations);
  put_one("oversize_segments", s.oversize_segments);
  put_array("requested_bytes", s.requested_bytes);
  put_array("reserved_bytes", s.reserved_bytes);
  put_array("segment", s.segment);
  return j;
}

std::array<bool, 3> CachingAllocator::stat_types(const BlockPool& p) const {
  return {true, p.is_small, !p.is_small};
}

void CachingAllocator::increase(StatArray& a, const BlockPool& p, std::uint64_t amount) {
  const auto t = stat_types(p);
  for (std::size_t k = 0; k < 3; ++k) {
    if (t[k]) a[k].increase(amount);
  }
}

void CachingAllocator::decrease(StatArray& a, const BlockPool& p, std::uint64_t amount) {
  const auto t = stat_types(p);
  for (std::size_t k = 0; k < 3; ++k) {
    if (t[k]) a[k].decrease(amount);
  }
}

}  // namespace racelab::alloc
