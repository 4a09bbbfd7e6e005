#pragma once
// A model of PyTorch 2.11's CUDA caching allocator for one device
// (c10/cuda/CUDACachingAllocator.cpp, DeviceCachingAllocator): the same pools, rounding, best-fit
// search, split and merge rules, oversize rules, expandable segments, garbage collection,
// release-and-retry on out-of-memory and the same statistics. docs/allocator.md maps every rule to
// the source it follows.
//
// Device memory is simulated: a new segment gets the address the AddressHint returns (the k-th
// real segment address when replaying a trace, so that placements are comparable) unless there is
// none (a what-if) or it would overlap a live segment; then it gets a synthetic address where the
// CUDA driver would put it (driver_address).
//
// allocator.cc keeps the blocks, pools and addresses; allocator_policy.cc is malloc and free,
// allocator_expandable.cc expandable segments, allocator_stats.cc the statistics.
#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "alloc/config.h"
#include "alloc/segments.h"
#include "alloc/trace.h"

namespace racelab::alloc {

inline constexpr std::uint64_t kMinBlockSize = 512;
inline constexpr std::uint64_t kSmallSize = 1048576;
inline constexpr std::uint64_t kSmallBuffer = 2097152;
inline constexpr std::uint64_t kLargeBuffer = 20971520;
inline constexpr std::uint64_t kMinLargeAlloc = 10485760;
inline constexpr std::uint64_t kRoundLarge = 2097152;

struct Stat {
  std::int64_t current = 0;
  std::int64_t peak = 0;
  std::int64_t allocated = 0;
  std::int64_t freed = 0;

  void increase(std::uint64_t amount) {
    current += static_cast<std::int64_t>(amount);
    peak = std::max(current, peak);
    allocated += static_cast<std::int64_t>(amount);
  }
  void decrease(std::uint64_t amount) {
    current -= static_cast<std::int64_t>(amount);
    freed += static_cast<std::int64_t>(amount);
  }
};

enum StatType : std::size_t { kAggregate = 0, kSmallPool = 1, kLargePool = 2 };
using StatArray = std::array<Stat, 3>;

struct Stats {
  StatArray allocation, segment, active, inactive_split, allocated_bytes, reserved_bytes,
      active_bytes, inactive_split_bytes, requested_bytes;
  std::int64_t num_alloc_retries = 0;
  std::int64_t num_ooms = 0;
  std::int64_t num_sync_all_streams = 0;
  std::int64_t num_device_alloc = 0;
  std::int64_t num_device_free = 0;
  Stat oversize_allocations, oversize_segments;
  std::int64_t max_split_size = 0;
};

// torch.cuda.memory_stats() keys: "allocated_bytes.all.current", "num_alloc_retries", ...
nlohmann::ordered_json memory_stats_json(const Stats& s);

struct SegmentEvent {
  Action action;  // kSegmentAlloc, kSegmentFree, kSegmentMap, kSegmentUnmap or kOom
  std::uint64_t addr;
  std::uint64_t size;
  bool operator==(const SegmentEvent&) const = default;
};

// What the cache held when an allocation found no free block and went to the device: the
// request, its pool and stream, and the free bytes that pool held for that stream. When the free
// bytes would have covered the request but no one block did, the request failed on fragmentation.
struct CacheMiss {
  std::uint64_t size = 0;        // rounded request
  std::uint64_t alloc_size = 0;  // the segment (or pages) it asks the device for
  bool small_pool = false;
  std::int64_t stream = 0;
  std::uint64_t free_bytes = 0;    // free in the pool, for this stream
  std::uint64_t largest_free = 0;  // the largest of those blocks
  std::size_t free_blocks = 0;     // how many
  std::size_t free_segments = 0;   // in how many segments (mapped ranges with expandable ones)
  // A free block at least as large existed but best fit may not take it (max_split_size: a block
  // at or above it serves only requests above it, and only those within max_non_split_rounding).
  bool oversize_excluded = false;
  bool fragmentation() const { return largest_free < size && free_bytes >= size; }
};

struct ExpandableSegment;
struct BlockPool;

struct Block {
  std::int64_t stream = 0;
  std::uint64_t size = 0;
  std::uint64_t requested_size = 0;
  BlockPool* pool = nullptr;
  std::uint64_t ptr = 0;
  bool allocated = false;
  bool mapped = true;
  bool pending_free = false;  // free requested, not yet completed (outstanding stream uses)
  Block* prev = nullptr;
  Block* next = nullptr;
  std::int64_t gc_count_base = 0;
  ExpandableSegment* es = nullptr;
  Block* active_prev = nullptr;  // the allocator's list of active (allocated or pending) blocks
  Block* active_next = nullptr;

  bool is_split() const { return prev != nullptr || next != nullptr; }
};

// BlockComparatorSize / BlockComparatorAddress: stream first, then size and address. Inline: every
// pool operation of every allocator file compares blocks.
struct SizeOrder {
  bool operator()(const Block* a, const Block* b) const {
    if (a->stream != b->stream)
      return static_cast<std::uint64_t>(a->stream) < static_cast<std::uint64_t>(b->stream);
    if (a->size != b->size) return a->size < b->size;
    return a->ptr < b->ptr;
  }
};
struct AddressOrder {
  bool operator()(const Block* a, const Block* b) const {
    if (a->stream != b->stream)
      return static_cast<std::uint64_t>(a->stream) < static_cast<std::uint64_t>(b->stream);
    return a->ptr < b->ptr;
  }
};

struct BlockPool {
  explicit BlockPool(bool small) : is_small(small) {}
  std::set<Block*, SizeOrder> blocks;
  std::set<Block*, AddressOrder> unmapped;
  bool is_small;
  std::int64_t get_free_blocks_call_count = 0;
};

struct ExpandableSegment {
  std::uint64_t base = 0;
  std::uint64_t segment_size = 0;  // page: 2 MiB (small pool) or 20 MiB (large pool)
  std::uint64_t max_handles = 0;
  std::int64_t stream = 0;
  std::vector<bool> handles;  // mapped pages
  std::uint64_t size() const { return segment_size * max_handles; }
};

// Called for every new segment (cudaMalloc or expandable address reservation), in order:
// returns the address the real allocator used for it, or nothing.
using AddressHint = std::function<std::optional<std::uint64_t>(std::uint64_t size)>;

class CachingAllocator {
 public:
  explicit CachingAllocator(Config config, AddressHint hint = {});
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  struct MallocResult {
    Block* block = nullptr;   // nullptr on out-of-memory
    std::string oom_message;  // PyTorch's OutOfMemoryError text
  };
  MallocResult malloc(std::uint64_t size, std::int64_t stream);
  // free() is PyTorch's two steps: the request (allocation statistics) and the completion (the
  // block goes back to its pool). Without stream uses PyTorch completes at once; a trace says when.
  void free_request(Block* block);
  void free_complete(Block* block);
  void free(Block* block) {
    free_request(block);
    free_complete(block);
  }
  void empty_cache();
  // The segment frees and unmaps empty_cache() would make now, in order, without making them.
  std::vector<SegmentEvent> predict_empty_cache() const;

  const Stats& stats() const { return stats_; }
  const Config& config() const { return config_; }
  // Every segment alloc/free/map/unmap and out-of-memory, in order.
  const std::vector<SegmentEvent>& segment_events() const { return events_; }
  std::uint64_t largest_free_block() const;
  std::uint64_t free_cached_bytes() const;
  std::size_t mapped_segment_count() const;  // snapshot-style: contiguous mapped ranges
  std::uint64_t device_used() const { return total_allocated_memory_; }
  // The cache at the last malloc that found no free block (before collection or release).
  const CacheMiss& last_miss() const { return last_miss_; }

  // The state as torch.cuda.memory._snapshot()['segments'] lists it, `device` written into each
  // segment (segments_value() in snapshot.h makes it those values).
  std::vector<Segment> segments(std::int64_t device = 0) const;

  static std::uint64_t round_size(std::uint64_t size, const Config& c);
  static std::uint64_t allocation_size(std::uint64_t size);

 private:
  struct Params {
    std::uint64_t size;
    std::int64_t stream;
    BlockPool* pool;
    std::uint64_t alloc_size;
    Block* block = nullptr;
  };

  BlockPool& pool_for(std::uint64_t size) { return size <= kSmallSize ? small_ : large_; }
  std::array<bool, 3> stat_types(const BlockPool& p) const;
  void increase(StatArray& a, const BlockPool& p, std::uint64_t amount);
  void decrease(StatArray& a, const BlockPool& p, std::uint64_t amount);

  bool get_free_block(Params& p);
  CacheMiss describe_miss(const Params& p) const;
  bool should_split(const Block* b, std::uint64_t size) const;
  Block* alloc_found_block(Params& p, std::uint64_t orig_size, bool split);
  bool alloc_block(Params& p, bool is_retry);
  bool release_available_cached_blocks(const Params& p);
  void release_cached_blocks();
  void release_blocks(BlockPool& pool);
  void release_block(Block* b);
  void garbage_collect_cached_blocks();
  void free_block(Block* b);
  std::uint64_t try_merge_blocks(Block* dst, Block* src, BlockPool& pool);
  void insert_into_blocks(BlockPool& pool, Block* b);

  // Expandable segments.
  Block* try_allocate_expandable_block(std::int64_t stream, BlockPool& pool, std::uint64_t size);
  Block* find_expandable_block(std::int64_t stream, BlockPool& pool, std::uint64_t size);
  bool map_block(Block* to_map, std::uint64_t size);
  void unmap_block(Block* b);
  void release_expandable_segment(Block* b);
  // Page ranges [first, last) of `es` that unmap(ptr, size) would unmap.
  static std::pair<std::uint64_t, std::uint64_t> unmap_pages(const ExpandableSegment& es,
                                                             std::uint64_t ptr, std::uint64_t size);

  // Blocks come from chunks the allocator owns, recycled through a free list.
  Block* new_block();
  void delete_block(Block* b);
  void link_active(Block* b);
  void unlink_active(Block* b);
  template <class F>
  void for_each_active(F f) const {
    for (Block* b = active_head_; b; b = b->active_next) f(b);
  }

  std::uint64_t new_address(std::uint64_t size);
  bool reserved(std::uint64_t start, std::uint64_t size) const;
  std::uint64_t driver_address(std::uint64_t size);
  void driver_release(std::uint64_t start, std::uint64_t end);
  void release_address(std::uint64_t addr);
  std::uint64_t capacity() const;
  std::string oom_message(std::uint64_t alloc_size) const;

  Config config_;
  AddressHint hint_;
  Stats stats_;
  BlockPool large_{false};
  BlockPool small_{true};
  Block* active_head_ = nullptr;
  std::vector<std::unique_ptr<Block[]>> chunks_;
  std::vector<Block*> free_blocks_;
  std::vector<std::unique_ptr<ExpandableSegment>> expandable_;
  std::uint64_t total_allocated_memory_ = 0;
  std::uint64_t allowed_memory_maximum_ = 0;
  bool set_fraction_ = false;
  std::vector<SegmentEvent> events_;
  struct Reservation {
    std::uint64_t end;
    bool synthetic;  // placed by driver_address, not a real (hinted) address
  };
  std::map<std::uint64_t, Reservation> address_space_;  // live reservations by start
  // Synthetic addresses (driver_address): ranges of 32 MiB units downwards from the top, and the
  // free ranges among them (start -> end).
  static constexpr std::uint64_t kSyntheticTop = 0x7f0000000000ULL;
  static constexpr std::uint64_t kDriverUnit = 33554432;
  std::uint64_t driver_low_ = 0;
  std::map<std::uint64_t, std::uint64_t> driver_free_;
  CacheMiss last_miss_;
};

}  // namespace racelab::alloc
