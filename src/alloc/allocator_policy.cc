// CachingAllocator's policy, as DeviceCachingAllocator::malloc and free decide: rounding, the
// best-fit search, splitting, new segments, the release-and-retry sequence on out-of-memory,
// garbage collection, freeing (merging with free neighbours) and empty_cache. Expandable segments
// are allocator_expandable.cc; the blocks and pools these work on are allocator.cc.
#include <fmt/format.h>

#include <algorithm>
#include <bit>

#include "alloc/allocator.h"

namespace racelab::alloc {

namespace {

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

// ---------------------------------------------------------------------------------------------
// malloc

CachingAllocator::MallocResult CachingAllocator::malloc(std::uint64_t orig_size,
                                                        std::int64_t stream) {
  const std::uint64_t size = round_size(orig_size, config_);
  BlockPool& pool = pool_for(size);
  Params p{size, stream, &pool, allocation_size(size)};

  bool found = get_free_block(p);
  if (!found) {
    last_miss_ = describe_miss(p);
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

CacheMiss CachingAllocator::describe_miss(const Params& p) const {
  CacheMiss m;
  m.size = p.size;
  m.alloc_size = p.alloc_size;
  m.small_pool = p.pool->is_small;
  m.stream = p.stream;
  std::set<std::uint64_t> heads;  // first block of the segment (mapped range) of each free block
  for (const Block* b : p.pool->blocks) {
    if (b->stream != p.stream) continue;
    if (b->es && !config_.expandable_segments) continue;  // best fit skips them too
    m.free_bytes += b->size;
    m.largest_free = std::max(m.largest_free, b->size);
    ++m.free_blocks;
    const Block* head = b;
    while (head->prev && head->prev->mapped) head = head->prev;
    heads.insert(head->ptr);
    if (b->size >= p.size) m.oversize_excluded = true;
  }
  m.free_segments = heads.size();
  return m;
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
  if (block->size >= config_.max_split_size) stats_.oversize_allocations.increase(1);
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
  if (size >= config_.max_split_size) stats_.oversize_segments.increase(1);
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
  if (b->size >= config_.max_split_size) stats_.oversize_segments.decrease(1);
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
  if (b->size >= config_.max_split_size) stats_.oversize_allocations.decrease(1);
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

}  // namespace racelab::alloc
