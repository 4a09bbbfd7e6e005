// CachingAllocator's bookkeeping: where blocks live (the size-ordered pools, the chunks blocks are
// recycled from, the list of active blocks), merging a block with its free neighbours, the device
// address space, and the inspection views (free bytes, mapped ranges, typed segments). The policy
// that uses them is allocator_policy.cc (malloc, free, release) and allocator_expandable.cc
// (expandable segments); the statistics are allocator_stats.cc.
#include "alloc/allocator.h"

#include <algorithm>

namespace racelab::alloc {

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

// ---------------------------------------------------------------------------------------------
// Blocks and pools

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

void CachingAllocator::insert_into_blocks(BlockPool& pool, Block* b) {
  b->gc_count_base = pool.get_free_blocks_call_count;
  pool.blocks.insert(b);
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

// ---------------------------------------------------------------------------------------------
// Addresses and inspection

bool CachingAllocator::reserved(std::uint64_t start, std::uint64_t size) const {
  auto it = address_space_.upper_bound(start);
  if (it != address_space_.end() && it->first < start + size) return true;
  return it != address_space_.begin() && std::prev(it)->second.end > start;
}

std::uint64_t CachingAllocator::new_address(std::uint64_t size) {
  std::optional<std::uint64_t> addr;
  if (hint_) addr = hint_(size);
  const bool synthetic = !addr || *addr == 0 || reserved(*addr, size);
  if (synthetic) addr = driver_address(size);
  address_space_[*addr] = {*addr + size, synthetic};
  return *addr;
}

// A what-if has no real address to give a new segment, and best fit breaks ties between free
// blocks of one size by address, so the order of segments matters. The model places them as the
// H200's driver placed every segment of the conformance runs (docs/allocator.md, Conformance):
// a request goes to the lowest free range that holds it, at that range's start; with none, to a
// new range of whole 32 MiB units, 32 MiB aligned, below every earlier one, at its start, the
// rest of the range left free for later, smaller requests. Freed ranges are free again.
std::uint64_t CachingAllocator::driver_address(std::uint64_t size) {
  for (;;) {
    auto fit = std::find_if(driver_free_.begin(), driver_free_.end(),
                            [&](const auto& r) { return r.second - r.first >= size; });
    std::uint64_t a = 0;
    if (fit != driver_free_.end()) {
      a = fit->first;
      const std::uint64_t end = fit->second;
      driver_free_.erase(fit);
      if (a + size < end) driver_free_[a + size] = end;
    } else {
      const std::uint64_t range = (size + kDriverUnit - 1) / kDriverUnit * kDriverUnit;
      a = (driver_low_ == 0 ? kSyntheticTop : driver_low_) - range;  // both 32 MiB aligned
      driver_low_ = a;
      if (size < range) driver_release(a + size, a + range);
    }
    // A replay that ran out of real addresses mixes them with these: never overlap one (the
    // range taken stays taken, and the search goes on).
    if (!reserved(a, size)) return a;
  }
}

void CachingAllocator::driver_release(std::uint64_t start, std::uint64_t end) {
  auto next = driver_free_.lower_bound(start);
  if (next != driver_free_.end() && next->first == end) {
    end = next->second;
    next = driver_free_.erase(next);
  }
  if (next != driver_free_.begin()) {
    auto prev = std::prev(next);
    if (prev->second == start) {
      prev->second = end;
      return;
    }
  }
  driver_free_[start] = end;
}

void CachingAllocator::release_address(std::uint64_t addr) {
  auto it = address_space_.find(addr);
  if (it == address_space_.end()) return;
  if (it->second.synthetic) driver_release(addr, it->second.end);
  address_space_.erase(it);
}

std::uint64_t CachingAllocator::capacity() const {
  return config_.device_total > config_.device_other ? config_.device_total - config_.device_other
                                                     : 0;
}

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
