#pragma once
// racelab alloc whatif: the same trace under other allocator settings.
#include <string>
#include <vector>

#include "alloc/replay.h"

namespace racelab::alloc {

struct WhatifLine {
  std::string name;  // the settings
  std::uint64_t peak_reserved = 0;
  std::uint64_t final_reserved = 0;
  std::int64_t segments = 0;  // cudaMalloc'd segments, or mapped ranges with expandable segments
  std::int64_t device_allocs = 0;
  std::int64_t retries = 0;
  std::size_t ooms = 0;
  std::string first_oom;        // "first out of memory at trace event N: <PyTorch's message>"
  std::vector<Sample> samples;  // at whatif_sample_points (the memory plot over the trace)
};

WhatifLine whatif_line(const std::string& name, const ReplayResult& r, bool expandable);

// The trace events after which every setting is sampled for the plot: `points` evenly spaced
// (every event of a shorter trace), the last event included.
std::vector<std::size_t> whatif_sample_points(std::size_t events, std::size_t points = 240);

// The device memory `c` assumes, in one line (total, CUDA context, memory fraction).
std::string device_text(const Config& c);

// whatif.html: the lines, and the device memory they assumed (`device`'s device fields).
std::string whatif_html(const std::string& trace, const std::vector<WhatifLine>& lines,
                        const Config& device);

}  // namespace racelab::alloc
