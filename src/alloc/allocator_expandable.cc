// CachingAllocator's expandable segments (expandable_segments:True): a segment reserves address
// space for 1 1/8 of the device and maps and unmaps pages (2 MiB in the small pool, 20 MiB in the
// large) as blocks need them (ExpandableSegment in CUDACachingAllocator.cpp), so that a growing
// program extends a segment instead of adding one. The rest of malloc is allocator_policy.cc.
#include <algorithm>

#include "alloc/allocator.h"

namespace racelab::alloc {

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

}  // namespace racelab::alloc
