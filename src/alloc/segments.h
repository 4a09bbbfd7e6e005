#pragma once
// The allocator's state as torch.cuda.memory._snapshot()['segments'] lists it: one Segment per
// contiguous mapped range, in address order, each with its blocks in address order. Plain values:
// the model (allocator.h) produces them without knowing how they are written, segments_value()
// (snapshot.h) writes them as the pickle values memory_viz reads, and report.html draws them.
#include <cstdint>
#include <vector>

namespace racelab::alloc {

enum class BlockState {
  kActiveAllocated,    // allocated
  kActivePendingFree,  // freed, the free not yet completed (outstanding stream uses)
  kInactive,           // free, cached in its pool
};

// PyTorch's name for a block state: "active_allocated", "active_pending_free", "inactive".
constexpr const char* block_state_name(BlockState s) {
  switch (s) {
    case BlockState::kActiveAllocated:
      return "active_allocated";
    case BlockState::kActivePendingFree:
      return "active_pending_free";
    case BlockState::kInactive:
      return "inactive";
  }
  return "?";
}

struct SegmentBlock {
  std::uint64_t address = 0;
  std::uint64_t size = 0;
  std::uint64_t requested_size = 0;  // of the block's last allocation (kept after it is freed)
  BlockState state = BlockState::kInactive;
};

struct Segment {
  std::int64_t device = 0;
  std::uint64_t address = 0;
  std::uint64_t total_size = 0;      // all blocks
  std::uint64_t allocated_size = 0;  // kActiveAllocated blocks
  std::uint64_t active_size = 0;     // kActiveAllocated and kActivePendingFree blocks
  std::uint64_t requested_size = 0;  // requested bytes of the active blocks
  std::int64_t stream = 0;
  bool small_pool = false;  // blocks of at most 1 MiB
  bool is_expandable = false;
  std::vector<SegmentBlock> blocks;

  // PyTorch's segment_type.
  const char* segment_type() const { return small_pool ? "small" : "large"; }
};

}  // namespace racelab::alloc
