#include "alloc/allocator.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>

namespace racelab::alloc {

// BlockComparatorSize / BlockComparatorAddress: stream first, then size and address.
bool SizeOrder::operator()(const Block* a, const Block* b) const {
  if (a->stream != b->stream)
    return static_cast<std::uint64_t>(a->stream) < static_cast<std::uint64_t>(b->stream);
  if (a->size != b->size) return a->size < b->size;
  return a->ptr < b->ptr;
}

bool AddressOrder::operator()(const Block* a, const Block* b) const {
  if (a->stream != b->stream)
    return static_cast<std::uint64_t>(a->stream) < static_cast<std::uint64_t>(b->stream);
  return a->ptr < b->ptr;
}

namespace {

void increase_stat(Stat& s, std::uint64_t amount) {
  s.current += static_cast<std::int64_t>(amount);
  s.peak = std::max(s.current, s.peak);
  s.allocated += static_cast<std::int64_t>(amount);
}

void decrease_stat(Stat& s, std::uint64_t amount) {
  s.current -= static_cast<std::int64_t>(amount);
  s.freed += static_cast<std::int64_t>(amount);
}

// roundup_power2_next_division: the next of `divisions` equal steps between two powers of two.
std::uint64_t roundup_power2_next_division(std::uint64_t size, std::uint64_t divisions) {
  if (std::has_single_bit(size)) return size;
  const std::uint64_t floor = std::bit_floor(size);
  const std::uint64_t step = floor >> (63 - std::countl_zero(divisions));
  if (step == 0) return floor << 1;
  const std::uint64_t rounded = size & ~(step - 1);
  return rounded == size ? size : rounded + step;
}

}  // namespace

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

CachingAllocator::CachingAllocator(Config config, AddressHint hint)
    : config_(std::move(config)), hint_(std::move(hint)) {
  stats_.max_split_size =
      config_.max_split_size == UINT64_MAX ? -1 : static_cast<std::int64_t>(config_.max_split_size);
  if (config_.memory_fraction > 0) {
    // setMemoryFraction: allowed = fraction * total device memory.
    allowed_memory_maximum_ = static_cast<std::uint64_t>(config_.memory_fraction *
                                                         static_cast<double>(config_.device_total));
    set_fraction_ = true;
  }
}

CachingAllocator::~CachingAllocator() = default;  // chunks_ own every block

Block* CachingAllocator::new_block() {
  if (free_blocks_.empty()) {
    constexpr std::size_t kChunk = 256;
    chunks_.push_back(std::make_unique<Block[]>(kChunk));
    for (std::size_t k = kChunk; k-- > 0;) free_blocks_.push_back(&chunks_.back()[k]);
  }
  Block* b = free_blocks_.back();
  free_blocks_.pop_back();
  *b = Block{};
  return b;
}

void CachingAllocator::delete_block(Block* b) { free_blocks_.push_back(b); }

void CachingAllocator::link_active(Block* b) {
  b->active_prev = nullptr;
  b->active_next = active_head_;
  if (active_head_) active_head_->active_prev = b;
  active_head_ = b;
}

void CachingAllocator::unlink_active(Block* b) {
  if (b->active_prev)
    b->active_prev->active_next = b->active_next;
  else if (active_head_ == b)
    active_head_ = b->active_next;
  if (b->active_next) b->active_next->active_prev = b->active_prev;
  b->active_prev = b->active_next = nullptr;
}

std::uint64_t CachingAllocator::round_size(std::uint64_t size, const Config& c) {
  if (size < kMinBlockSize) return kMinBlockSize;
  const std::uint64_t divisions = c.divisions_for(size);
  if (divisions > 1 && size > kMinBlockSize * divisions) {
    return roundup_power2_next_division(size, divisions);
  }
  return kMinBlockSize * ((size + kMinBlockSize - 1) / kMinBlockSize);
}

std::uint64_t CachingAllocator::allocation_size(std::uint64_t size) {
  if (size <= kSmallSize) return kSmallBuffer;
  if (size < kMinLargeAlloc) return kLargeBuffer;
  return kRoundLarge * ((size + kRoundLarge - 1) / kRoundLarge);
}

std::array<bool, 3> CachingAllocator::stat_types(const BlockPool& p) const {
  return {true, p.is_small, !p.is_small};
}

void CachingAllocator::increase(StatArray& a, const BlockPool& p, std::uint64_t amount) {
  const auto t = stat_types(p);
  for (std::size_t k = 0; k < 3; ++k) {
    if (t[k]) increase_stat(a[k], amount);
  }
}

void CachingAllocator::decrease(StatArray& a, const BlockPool& p, std::uint64_t amount) {
  const auto t = stat_types(p);
  for (std::size_t k = 0; k < 3; ++k) {
    if (t[k]) decrease_stat(a[k], amount);
  }
}

void CachingAllocator::insert_into_blocks(BlockPool& pool, Block* b) {
  b->gc_count_base = pool.get_free_blocks_call_count;
  pool.blocks.insert(b);
}

std::uint64_t CachingAllocator::capacity() const {
  return config_.device_total > config_.device_other ? config_.device_total - config_.device_other
                                                     : 0;
}

// ---------------------------------------------------------------------------------------------
// malloc

CachingAllocator::MallocResult CachingAllocator::malloc(std::uint64_t orig_size,
                                                        std::int64_t stream) {
  const std::uint64_t size = round_size(orig_size, config_);
  BlockPool& pool = pool_for(size);
  Params p{size, stream, &pool, allocation_size(size)};

  bool found = get_free_block(p);
  if (!found) {
    if (set_fraction_ && config_.garbage_collection_threshold > 0.0)
      garbage_collect_cached_blocks();
    found = alloc_block(p, false) || (release_available_cached_blocks(p) && alloc_block(p, false));
    if (!found) {
      release_cached_blocks();
      found = alloc_block(p, true);
    }
  }
  if (!found) {
    stats_.num_ooms += 1;
    const std::uint64_t free_now =
        capacity() > total_allocated_memory_ ? capacity() - total_allocated_memory_ : 0;
    events_.push_back({Action::kOom, free_now, size});
    return {nullptr, oom_message(p.alloc_size)};
  }
  const bool split = should_split(p.block, size);
  return {alloc_found_block(p, orig_size, split), {}};
}

std::string CachingAllocator::oom_message(std::uint64_t alloc_size) const {
  const std::uint64_t free_now =
      capacity() > total_allocated_memory_ ? capacity() - total_allocated_memory_ : 0;
  const auto allocated = static_cast<std::uint64_t>(stats_.allocated_bytes[kAggregate].current);
  const auto reserved = static_cast<std::uint64_t>(stats_.reserved_bytes[kAggregate].current);
  std::string allowed;
  if (set_fraction_) allowed = format_bytes(allowed_memory_maximum_) + " allowed; ";
  return fmt::format(
      "CUDA out of memory. Tried to allocate {}. GPU 0 has a total capacity of {} of which {} is "
      "free. {}Of the allocated memory {} is allocated by PyTorch, and {} is reserved by PyTorch "
      "but unallocated. If reserved but unallocated memory is large try setting "
      "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See "
      "documentation for Memory Management  "
      "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
      format_bytes(alloc_size), format_bytes(config_.device_total), format_bytes(free_now), allowed,
      format_bytes(allocated), format_bytes(reserved - allocated));
}

bool CachingAllocator::get_free_block(Params& p) {
  BlockPool& pool = *p.pool;
  if (set_fraction_ && config_.garbage_collection_threshold > 0.0)
    ++pool.get_free_blocks_call_count;
  Block key;
  key.stream = p.stream;
  key.size = p.size;
  auto it = pool.blocks.lower_bound(&key);
  if (it == pool.blocks.end() || (*it)->stream != p.stream) return false;

  if ((*it)->es) {
    if (config_.expandable_segments) {
      // Best fit counts an expandable block at the size it can grow to.
      auto expandable_size = [](const Block* b) {
        return b->size + (b->next && !b->next->mapped ? b->next->size : 0);
      };
      auto next = std::next(it);
      while ((*it)->es && next != pool.blocks.end() && (*next)->stream == p.stream &&
             expandable_size(*next) < expandable_size(*it)) {
        it = next++;
      }
    } else {
      do {
        ++it;
      } while (it != pool.blocks.end() && (*it)->es && (*it)->stream == p.stream);
      if (it == pool.blocks.end() || (*it)->stream != p.stream) return false;
    }
  }
  // Do not return an oversized block for a large request; round oversized requests up only
  // within max_non_split_rounding.
  if (p.size < config_.max_split_size && (*it)->size >= config_.max_split_size) return false;
  if (p.size >= config_.max_split_size && (*it)->size >= p.size + config_.max_non_split_rounding) {
    return false;
  }
  p.block = *it;
  pool.blocks.erase(it);
  return true;
}

bool CachingAllocator::should_split(const Block* b, std::uint64_t size) const {
  const std::uint64_t remaining = b->size - size;
  if (b->pool->is_small || config_.expandable_segments) return remaining >= kMinBlockSize;
  return size < config_.max_split_size && remaining > kSmallSize;
}

Block* CachingAllocator::alloc_found_block(Params& p, std::uint64_t orig_size, bool split) {
  BlockPool& pool = *p.pool;
  Block* block = p.block;
  const bool already_split = block->is_split();
  if (split) {
    Block* remaining = block;
    block = new_block();
    block->stream = p.stream;
    block->size = p.size;
    block->pool = &pool;
    block->ptr = remaining->ptr;
    block->es = remaining->es;
    block->prev = remaining->prev;
    if (block->prev) block->prev->next = block;
    block->next = remaining;
    remaining->prev = block;
    remaining->ptr += p.size;
    remaining->size -= p.size;
    insert_into_blocks(pool, remaining);
    if (already_split && !block->es) {
      decrease(stats_.inactive_split_bytes, pool, block->size);
    } else if (!block->es) {
      increase(stats_.inactive_split_bytes, pool, remaining->size);
      increase(stats_.inactive_split, pool, 1);
    }
  } else if (already_split && !block->es) {
    decrease(stats_.inactive_split_bytes, pool, block->size);
    decrease(stats_.inactive_split, pool, 1);
  }
  block->allocated = true;
  block->requested_size = orig_size;
  link_active(block);
  increase(stats_.allocation, pool, 1);
  increase(stats_.allocated_bytes, pool, block->size);
  increase(stats_.active, pool, 1);
  increase(stats_.active_bytes, pool, block->size);
  increase(stats_.requested_bytes, pool, block->requested_size);
  if (block->size >= config_.max_split_size) increase_stat(stats_.oversize_allocations, 1);
  return block;
}

bool CachingAllocator::alloc_block(Params& p, bool is_retry) {
  const std::uint64_t size = p.alloc_size;
  if (is_retry) stats_.num_alloc_retries += 1;
  if (set_fraction_ && total_allocated_memory_ + size > allowed_memory_maximum_) return false;
  if (config_.expandable_segments) {
    p.block = try_allocate_expandable_block(p.stream, *p.pool, p.size);
    return p.block != nullptr;
  }
  if (total_allocated_memory_ + size > capacity()) return false;  // cudaMalloc fails
  total_allocated_memory_ += size;
  auto* b = new_block();
  b->stream = p.stream;
  b->size = size;
  b->pool = p.pool;
  b->ptr = new_address(size);
  p.block = b;
  increase(stats_.segment, *p.pool, 1);
  increase(stats_.reserved_bytes, *p.pool, size);
  if (size >= config_.max_split_size) increase_stat(stats_.oversize_segments, 1);
  stats_.num_device_alloc++;
  events_.push_back({Action::kSegmentAlloc, b->ptr, size});
  return true;
}

bool CachingAllocator::release_available_cached_blocks(const Params& p) {
  if (config_.max_split_size == UINT64_MAX) return false;
  BlockPool& pool = *p.pool;
  Block key;
  key.stream = p.stream;
  key.size = std::max(p.size, config_.max_split_size);
  auto it = pool.blocks.lower_bound(&key);
  if (it == pool.blocks.end() || (*it)->stream != p.stream) {
    // No single block is large enough: free oversize blocks, largest first.
    if (it == pool.blocks.begin()) return false;
    std::uint64_t released = 0;
    --it;
    while (released < key.size && (*it)->size >= config_.max_split_size &&
           (*it)->stream == p.stream) {
      auto cur = it;
      released += (*it)->size;
      if (it != pool.blocks.begin()) {
        --it;
        release_block(*cur);
      } else {
        release_block(*cur);
        break;
      }
    }
    if (released < key.size) return false;
  } else {
    release_block(*it);
  }
  return true;
}

void CachingAllocator::release_cached_blocks() {
  // synchronize_and_free_events: every outstanding free completes.
  stats_.num_sync_all_streams++;
  std::vector<Block*> pending;
  for_each_active([&](Block* b) {
    if (b->pending_free) pending.push_back(b);
  });
  std::sort(pending.begin(), pending.end(),
            [](const Block* a, const Block* b) { return a->ptr < b->ptr; });
  for (Block* b : pending) free_block(b);
  release_blocks(large_);
  release_blocks(small_);
}

void CachingAllocator::release_blocks(BlockPool& pool) {
  std::vector<Block*> to_unmap;
  for (auto it = pool.blocks.begin(); it != pool.blocks.end();) {
    Block* b = *it++;
    if (b->es) {
      to_unmap.push_back(b);
    } else if (!b->prev && !b->next) {
      release_block(b);
    }
  }
  for (Block* b : to_unmap) {
    unmap_block(b);
    if (!b->prev && !b->next) release_expandable_segment(b);
  }
}

void CachingAllocator::release_block(Block* b) {
  stats_.num_device_free++;
  events_.push_back({Action::kSegmentFree, b->ptr, b->size});
  total_allocated_memory_ -= b->size;
  release_address(b->ptr);
  decrease(stats_.segment, *b->pool, 1);
  decrease(stats_.reserved_bytes, *b->pool, b->size);
  if (b->size >= config_.max_split_size) decrease_stat(stats_.oversize_segments, 1);
  b->pool->blocks.erase(b);
  delete_block(b);
}

void CachingAllocator::garbage_collect_cached_blocks() {
  const auto threshold = static_cast<std::uint64_t>(config_.garbage_collection_threshold *
                                                    static_cast<double>(allowed_memory_maximum_));
  if (total_allocated_memory_ <= threshold) return;
  const std::uint64_t target = total_allocated_memory_ - threshold;
  std::uint64_t reclaimed = 0;
  auto age = [&](const Block* b) {
    return static_cast<std::uint64_t>(
        static_cast<int>(large_.get_free_blocks_call_count - b->gc_count_base));
  };
  std::uint64_t total_age = 0;
  int freeable = 0;
  for (Block* b : large_.blocks) {
    if (!b->is_split()) {
      total_age += age(b);
      ++freeable;
    }
  }
  if (freeable == 0) return;
  bool freed = true;
  while (reclaimed < target && freed && freeable > 0) {
    const double age_threshold = static_cast<double>(total_age) / freeable;
    freed = false;
    for (auto it = large_.blocks.begin(); it != large_.blocks.end();) {
      Block* b = *it++;
      if (!b->is_split() && static_cast<double>(age(b)) >= age_threshold) {
        freed = true;
        reclaimed += b->size;
        total_age -= age(b);
        --freeable;
        release_block(b);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// free

void CachingAllocator::free_request(Block* b) {
  b->allocated = false;
  b->pending_free = true;
  decrease(stats_.allocation, *b->pool, 1);
  decrease(stats_.allocated_bytes, *b->pool, b->size);
  if (b->size >= config_.max_split_size) decrease_stat(stats_.oversize_allocations, 1);
}

void CachingAllocator::free_complete(Block* b) {
  if (!b->pending_free) return;  // completed already (a synchronising release)
  free_block(b);
}

void CachingAllocator::free_block(Block* b) {
  b->pending_free = false;
  const std::uint64_t original_size = b->size;
  const std::uint64_t requested = b->requested_size;
  BlockPool& pool = *b->pool;
  std::int64_t net_blocks = 0;
  std::int64_t net_bytes = 0;
  for (Block* candidate : {b->prev, b->next}) {
    const std::uint64_t subsumed = try_merge_blocks(b, candidate, pool);
    if (subsumed > 0) {
      net_blocks -= 1;
      net_bytes -= static_cast<std::int64_t>(subsumed);
    }
  }
  unlink_active(b);
  insert_into_blocks(pool, b);
  if (b->is_split()) {
    net_blocks += 1;
    net_bytes += static_cast<std::int64_t>(b->size);
  }
  if (!b->es) {
    if (net_blocks > 0)
      increase(stats_.inactive_split, pool, static_cast<std::uint64_t>(net_blocks));
    if (net_blocks < 0)
      decrease(stats_.inactive_split, pool, static_cast<std::uint64_t>(-net_blocks));
    if (net_bytes > 0)
      increase(stats_.inactive_split_bytes, pool, static_cast<std::uint64_t>(net_bytes));
    if (net_bytes < 0)
      decrease(stats_.inactive_split_bytes, pool, static_cast<std::uint64_t>(-net_bytes));
  }
  decrease(stats_.active, pool, 1);
  decrease(stats_.active_bytes, pool, original_size);
  decrease(stats_.requested_bytes, pool, requested);
}

std::uint64_t CachingAllocator::try_merge_blocks(Block* dst, Block* src, BlockPool& pool) {
  if (!src || src->allocated || src->pending_free || dst->mapped != src->mapped) return 0;
  if (dst->prev == src) {
    dst->ptr = src->ptr;
    dst->prev = src->prev;
    if (dst->prev) dst->prev->next = dst;
  } else {
    dst->next = src->next;
    if (dst->next) dst->next->prev = dst;
  }
  const std::uint64_t subsumed = src->size;
  dst->size += subsumed;
  if (src->mapped) {
    pool.blocks.erase(src);
  } else {
    pool.unmapped.erase(src);
  }
  delete_block(src);
  return subsumed;
}

void CachingAllocator::empty_cache() { release_cached_blocks(); }

std::vector<SegmentEvent> CachingAllocator::predict_empty_cache() const {
  std::vector<SegmentEvent> out;
  for (const BlockPool* pool : {&large_, &small_}) {
    std::vector<const Block*> to_unmap;
    for (const Block* b : pool->blocks) {
      if (b->es) {
        to_unmap.push_back(b);
      } else if (!b->prev && !b->next) {
        out.push_back({Action::kSegmentFree, b->ptr, b->size});
      }
    }
    for (const Block* b : to_unmap) {
      const auto [first, last] = unmap_pages(*b->es, b->ptr, b->size);
      if (first < last) {
        out.push_back({Action::kSegmentUnmap, b->es->base + first * b->es->segment_size,
                       (last - first) * b->es->segment_size});
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Expandable segments

std::pair<std::uint64_t, std::uint64_t> CachingAllocator::unmap_pages(const ExpandableSegment& es,
                                                                      std::uint64_t ptr,
                                                                      std::uint64_t size) {
  // Only whole pages inside [ptr, ptr + size): segmentRight(ptr) .. segmentLeft(ptr + size).
  const std::uint64_t first = (ptr - es.base + es.segment_size - 1) / es.segment_size;
  const std::uint64_t last = (ptr + size - es.base) / es.segment_size;
  return {first, std::max(first, last)};
}

Block* CachingAllocator::find_expandable_block(std::int64_t stream, BlockPool& pool,
                                               std::uint64_t size) {
  auto allocatable = [](const Block* b) { return b && !b->allocated && !b->pending_free; };
  auto has_space = [&](const Block* b) {
    std::uint64_t bytes = 0;
    while (bytes < size && allocatable(b)) {
      bytes += b->size;
      b = b->next;
    }
    return bytes >= size;
  };
  Block key;
  key.stream = stream;
  key.ptr = 0;
  for (auto it = pool.unmapped.lower_bound(&key);
       it != pool.unmapped.end() && (*it)->stream == stream; ++it) {
    Block* c = *it;
    if (allocatable(c->prev)) c = c->prev;
    if (has_space(c)) return c;
  }
  auto es = std::make_unique<ExpandableSegment>();
  es->segment_size = pool.is_small ? kSmallBuffer : kLargeBuffer;
  // Address space for 1 1/8 of the device's memory, in whole pages.
  const std::uint64_t want = config_.device_total + config_.device_total / 8;
  es->max_handles = (want + es->segment_size - 1) / es->segment_size;
  es->stream = stream;
  es->base = new_address(es->size());
  auto* c = new_block();
  c->stream = stream;
  c->size = es->size();
  c->pool = &pool;
  c->ptr = es->base;
  c->mapped = false;
  c->es = es.get();
  expandable_.push_back(std::move(es));
  pool.unmapped.insert(c);
  return c;
}

bool CachingAllocator::map_block(Block* to_map, std::uint64_t size) {
  ExpandableSegment& es = *to_map->es;
  const std::uint64_t begin = (to_map->ptr - es.base) / es.segment_size;
  const std::uint64_t end = (to_map->ptr + size - es.base + es.segment_size - 1) / es.segment_size;
  if (begin == end) return false;
  const std::uint64_t bytes = (end - begin) * es.segment_size;
  if (total_allocated_memory_ + bytes > capacity()) return false;  // cuMemCreate fails
  if (es.handles.size() < end) es.handles.resize(end, false);
  for (std::uint64_t k = begin; k < end; ++k) es.handles[k] = true;
  const std::uint64_t mapped_ptr = es.base + begin * es.segment_size;

  BlockPool& pool = *to_map->pool;
  pool.unmapped.erase(to_map);
  to_map->mapped = true;
  if (bytes < to_map->size) {
    auto* rest = new_block();
    rest->stream = to_map->stream;
    rest->size = to_map->size - bytes;
    rest->pool = &pool;
    rest->ptr = to_map->ptr + bytes;
    rest->mapped = false;
    rest->es = to_map->es;
    rest->prev = to_map;
    rest->next = to_map->next;
    if (to_map->next) to_map->next->prev = rest;
    to_map->next = rest;
    pool.unmapped.insert(rest);
    to_map->size = bytes;
  }
  try_merge_blocks(to_map, to_map->prev, pool);
  try_merge_blocks(to_map, to_map->next, pool);
  insert_into_blocks(pool, to_map);

  total_allocated_memory_ += bytes;
  increase(stats_.reserved_bytes, pool, bytes);
  stats_.num_device_alloc++;
  events_.push_back({Action::kSegmentMap, mapped_ptr, bytes});
  return true;
}

Block* CachingAllocator::try_allocate_expandable_block(std::int64_t stream, BlockPool& pool,
                                                       std::uint64_t size) {
  Block* candidate = find_expandable_block(stream, pool, size);
  if (!candidate->mapped && !map_block(candidate, std::min(candidate->size, size))) return nullptr;
  while (candidate->size < size) {
    const std::uint64_t remaining = size - candidate->size;
    Block* next = candidate->next;
    if (!map_block(next, std::min(remaining, next->size))) return nullptr;
    candidate = next;
  }
  pool.blocks.erase(candidate);
  return candidate;
}

void CachingAllocator::unmap_block(Block* b) {
  ExpandableSegment& es = *b->es;
  const auto [first, last] = unmap_pages(es, b->ptr, b->size);
  if (first >= last) return;
  const std::uint64_t uptr = es.base + first * es.segment_size;
  const std::uint64_t usize = (last - first) * es.segment_size;
  for (std::uint64_t k = first; k < last; ++k) es.handles[k] = false;
  while (!es.handles.empty() && !es.handles.back()) es.handles.pop_back();

  BlockPool& pool = *b->pool;
  pool.blocks.erase(b);
  const std::uint64_t before = uptr - b->ptr;
  if (before > 0) {
    auto* f = new_block();
    f->stream = b->stream;
    f->size = before;
    f->pool = &pool;
    f->ptr = b->ptr;
    f->es = b->es;
    f->prev = b->prev;
    f->next = b;
    if (b->prev) b->prev->next = f;
    b->prev = f;
    insert_into_blocks(pool, f);
  }
  const std::uint64_t after = b->size - (before + usize);
  if (after > 0) {
    auto* f = new_block();
    f->stream = b->stream;
    f->size = after;
    f->pool = &pool;
    f->ptr = uptr + usize;
    f->es = b->es;
    f->prev = b;
    f->next = b->next;
    if (b->next) b->next->prev = f;
    b->next = f;
    insert_into_blocks(pool, f);
  }
  b->ptr = uptr;
  b->size = usize;
  b->mapped = false;
  try_merge_blocks(b, b->prev, pool);
  try_merge_blocks(b, b->next, pool);
  pool.unmapped.insert(b);

  total_allocated_memory_ -= usize;
  decrease(stats_.reserved_bytes, pool, usize);
  stats_.num_device_free++;
  events_.push_back({Action::kSegmentUnmap, uptr, usize});
}

void CachingAllocator::release_expandable_segment(Block* b) {
  b->pool->unmapped.erase(b);
  release_address(b->es->base);
  std::erase_if(expandable_, [&](const auto& es) { return es.get() == b->es; });
  delete_block(b);
}

// ---------------------------------------------------------------------------------------------
// Addresses and inspection

std::uint64_t CachingAllocator::new_address(std::uint64_t size) {
  auto overlaps = [&](std::uint64_t start) {
    auto it = address_space_.upper_bound(start);
    if (it != address_space_.end() && it->first < start + size) return true;
    if (it != address_space_.begin() && std::prev(it)->second > start) return true;
    return false;
  };
  std::optional<std::uint64_t> addr;
  if (hint_) addr = hint_(size);
  if (!addr || *addr == 0 || overlaps(*addr)) {
    // Synthetic: above everything used so far, 2 MiB aligned.
    std::uint64_t top = synthetic_next_;
    if (!address_space_.empty()) top = std::max(top, std::prev(address_space_.end())->second);
    if (top == 0) top = 0x7f0000000000ULL;
    addr = (top + kRoundLarge - 1) / kRoundLarge * kRoundLarge;
  }
  address_space_[*addr] = *addr + size;
  synthetic_next_ = std::max(synthetic_next_, *addr + size);
  return *addr;
}

void CachingAllocator::release_address(std::uint64_t addr) { address_space_.erase(addr); }

std::uint64_t CachingAllocator::largest_free_block() const {
  std::uint64_t best = 0;
  for (const BlockPool* p : {&large_, &small_}) {
    for (const Block* b : p->blocks) best = std::max(best, b->size);
  }
  return best;
}

std::uint64_t CachingAllocator::free_cached_bytes() const {
  std::uint64_t total = 0;
  for (const BlockPool* p : {&large_, &small_}) {
    for (const Block* b : p->blocks) total += b->size;
  }
  return total;
}

std::size_t CachingAllocator::mapped_segment_count() const {
  std::size_t n = 0;
  auto count_heads = [&](const Block* b) {
    if (!(b->prev && b->prev->mapped)) ++n;
  };
  for (const BlockPool* p : {&large_, &small_}) {
    for (const Block* b : p->blocks) count_heads(b);
  }
  for_each_active([&](const Block* b) { count_heads(b); });
  return n;
}

std::vector<Segment> CachingAllocator::segments(std::int64_t device) const {
  std::vector<const Block*> heads;
  auto add = [&](const Block* b) {
    if (!(b->prev && b->prev->mapped)) heads.push_back(b);
  };
  for (const BlockPool* p : {&large_, &small_}) {
    for (const Block* b : p->blocks) add(b);
  }
  for_each_active([&](const Block* b) { add(b); });
  std::sort(heads.begin(), heads.end(),
            [](const Block* a, const Block* b) { return a->ptr < b->ptr; });
  std::vector<Segment> segments;
  segments.reserve(heads.size());
  for (const Block* head : heads) {
    Segment& seg = segments.emplace_back();
    seg.device = device;
    seg.address = head->ptr;
    seg.stream = head->stream;
    seg.small_pool = head->pool->is_small;
    seg.is_expandable = head->es != nullptr;
    for (const Block* b = head; b && b->mapped; b = b->next) {
      const bool is_active = b->allocated || b->pending_free;
      seg.total_size += b->size;
      if (b->allocated) seg.allocated_size += b->size;
      if (is_active) {
        seg.active_size += b->size;
        seg.requested_size += b->requested_size;
      }
      seg.blocks.push_back({b->ptr, b->size, b->requested_size,
                            b->allocated ? BlockState::kActiveAllocated
                            : is_active  ? BlockState::kActivePendingFree
                                         : BlockState::kInactive});
    }
  }
  return segments;
}

}  // namespace racelab::alloc
