#pragma once
// Which line of the user's code made memory grow, and why the cache could not serve it.
//
// Every allocation that sent the allocator to the device (replay.h: DeviceAllocCause) carries
// what the cache held for its pool and stream at that moment and, where the trace recorded
// frames (torch.cuda.memory._record_memory_history(context="alloc", stacks="python"), which
// `racelab live python --alloc` uses), its Python stack. The call site of an allocation is its
// innermost frame outside torch (torch's own Python, Inductor's generated code, Triton): the line
// of the user's code that asked. Allocations of one growth are grouped by call site, most first.
#include <cstdint>
#include <string>
#include <vector>

#include "alloc/replay.h"

namespace racelab::alloc {

// The call site of an allocation with no Python frame: recorded without frames, or asked for by
// C++ alone (the autograd engine's backward runs on a thread of its own, with no Python above it).
inline constexpr const char* kNoStack = "no Python frame (C++ alone, e.g. autograd's backward)";

struct CallSite {
  std::string where;                 // "train.py:42 in forward", or kNoStack
  std::vector<std::string> callers;  // the next user frames out, innermost first (at most 2)
  std::size_t count = 0;             // allocations from it that went to the device
  std::uint64_t bytes = 0;           // what they asked for
};

// Whether a frame belongs to torch (or the compilers under it) rather than to the user's code.
bool is_torch_frame(const Frame& f);

// "train.py:42 in forward": the frame's file (its last two path parts), line and function.
std::string frame_text(const Frame& f);

// The innermost frame of `stack` outside torch, or nullptr (none recorded, or torch throughout).
const Frame* user_frame(const Stack& stack);

// The call sites of `causes`, grouped, most allocations first (then most bytes, then name).
// `stacks` is the snapshot's stack table; causes without a stack group under kNoStack.
std::vector<CallSite> call_sites(const std::vector<DeviceAllocCause>& causes,
                                 const std::vector<Stack>& stacks);

// One line for an allocation that went to the device: its size and pool, the block it could not
// fit in and why. "alloc of 28 MiB (large pool, stream 0): no free block of 28 MiB; 40 MiB free in
// 3 blocks across 3 segments, the largest 20 MiB: fragmentation; a new segment of 28 MiB".
std::string describe_cause(const DeviceAllocCause& c);

// "fragmentation", "cache too small" or "oversize blocks excluded": the why, in a word or three.
const char* cause_kind(const CacheMiss& m);

struct StabilityReport;
// The lines alloc report prints under a trace's verdict for its growth after the warm phase: per
// growth, each allocation that went to the device (the first few) and the call sites, grouped.
std::vector<std::string> growth_lines(const StabilityReport& r);

// What a report says where the trace has no frames.
inline constexpr const char* kNoFramesHint =
    "the trace recorded no frames: record with "
    "torch.cuda.memory._record_memory_history(context=\"alloc\", stacks=\"python\") (racelab live "
    "python --alloc does) to see the lines that grew it";

}  // namespace racelab::alloc
