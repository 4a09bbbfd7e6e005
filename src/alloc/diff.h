#pragma once
// racelab alloc diff: what changed in a device's memory between two runs (a variant that stayed
// stable and one that did not) or between two iterations of one run. Each side is the model's
// state at a point (its segments) and the allocations that went to the device up to it (with
// their call sites, attribution.h); the diff is segments and reserved bytes added and removed,
// by pool and by call site, and which side grew, where.
//
// Two runs have different addresses, so segments compare by (pool, size) as multisets: a 20 MiB
// large segment in both is the same, an extra one in B is added. Two iterations of one run share
// addresses, and compare the same way (a segment is its size there too, and none moves).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "alloc/attribution.h"
#include "alloc/report.h"

namespace racelab::alloc {

struct DiffSide {
  std::string name;                      // "sdpa_chunked_1", "sdpa_chunked_1 iteration 13"
  std::vector<Segment> segments;         // the state compared
  std::vector<DeviceAllocCause> causes;  // the device allocations up to that state
  std::vector<Stack> stacks;             // the stack table the causes index
  bool frames = false;                   // the trace recorded frames
  // A whole run's verdict, and the call sites of its growth after the warm phase ("" / none for
  // an iteration).
  std::string verdict;
  std::vector<std::string> growth_at;
  std::vector<CallSite> late_sites;
};

struct PoolDiff {
  std::string pool;  // "small" or "large"
  std::size_t segments_a = 0, segments_b = 0;
  std::uint64_t reserved_a = 0, reserved_b = 0;
  std::vector<std::uint64_t> added;    // segment sizes in B and not in A
  std::vector<std::uint64_t> removed;  // in A and not in B
};

struct SiteDiff {
  std::string where;
  std::size_t count_a = 0, count_b = 0;  // device allocations from the call site
  std::uint64_t bytes_a = 0, bytes_b = 0;
};

struct MemoryDiff {
  std::string a, b;                  // the sides' names
  std::string a_verdict, b_verdict;  // a run's stability verdict (empty for an iteration)
  std::vector<PoolDiff> pools;
  std::vector<SiteDiff> sites;  // call sites whose device allocations differ, most bytes first
  std::string grew;             // the side that grew ("" when neither did)
  std::string summary;          // one line: who grew, by how much, where
  bool frames = false;          // both sides recorded frames
};

// A run's side: `r`'s final state (the last window's segments) and all its device allocations.
DiffSide run_side(const StabilityReport& r, const std::vector<Stack>& stacks);
// An iteration's side: `r` analysed with segments_at the iteration (StabilityReport::segments_at
// holds its state), with the device allocations up to the end of that iteration.
DiffSide iteration_side(const StabilityReport& r, const std::vector<Stack>& stacks,
                        const std::string& label);

MemoryDiff diff_sides(const DiffSide& a, const DiffSide& b);

// The lines alloc diff prints (the summary first).
std::vector<std::string> diff_lines(const MemoryDiff& d);

// alloc-diff.json: "format": "racelab-alloc-diff", "version": 1, then the diff.
inline constexpr int kAllocDiffVersion = 1;
nlohmann::ordered_json diff_json(const MemoryDiff& d);

}  // namespace racelab::alloc
