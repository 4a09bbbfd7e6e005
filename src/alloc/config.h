#pragma once
// The caching allocator's settings, as PYTORCH_CUDA_ALLOC_CONF spells them and as a snapshot's
// 'allocator_settings' records them (c10/cuda/CUDAAllocatorConfig).
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "util/units.h"

namespace racelab::alloc {

inline constexpr std::uint64_t kMiB = 1024 * 1024;
inline constexpr std::size_t kRoundupIntervals = 16;  // 1 MiB .. 32 GiB, one per power of two
// Measured on the H200 these traces come from (torch 2.11): total and free at start.
inline constexpr std::uint64_t kH200TotalBytes = 150109880320;
inline constexpr std::uint64_t kH200ContextBytes = 150109880320 - 149557477376;

struct Config {
  std::uint64_t max_split_size = UINT64_MAX;         // max_split_size_mb (unset: no limit)
  std::uint64_t max_non_split_rounding = 20 * kMiB;  // max_non_split_rounding_mb
  std::array<std::uint64_t, kRoundupIntervals> roundup_power2_divisions{};  // 0: plain rounding
  double garbage_collection_threshold = 0;
  bool expandable_segments = false;
  // Not allocator settings but the device the trace ran on: total memory (for the out-of-memory
  // message and the expandable address space), memory other than PyTorch's (the CUDA context),
  // and torch.cuda.set_per_process_memory_fraction (0: not called).
  std::uint64_t device_total = kH200TotalBytes;
  std::uint64_t device_other = kH200ContextBytes;
  double memory_fraction = 0;

  // PYTORCH_CUDA_ALLOC_CONF as given (or as recorded in the snapshot).
  std::string conf;

  std::uint64_t divisions_for(std::uint64_t size) const;
  std::string describe() const;  // one line, PYTORCH_CUDA_ALLOC_CONF style, every setting
};

// Applies PYTORCH_CUDA_ALLOC_CONF text ("expandable_segments:True,max_split_size_mb:64,...") on
// top of `base`. Throws InputError naming the option and the problem, with the rules PyTorch
// enforces (max_split_size_mb > 20, power-of-two divisions, 0 < threshold < 1, ...).
Config parse_config(std::string_view text, Config base = {});

struct PickleValue;  // alloc/pickle.h; forward-declared so that the allocator model needs none

// The settings a snapshot recorded (its 'allocator_settings' dict); defaults when absent.
Config config_from_snapshot(const PickleValue* allocator_settings, const std::string& origin);

// c10's format_size (util/units.h).
inline std::string format_bytes(std::uint64_t size) { return racelab::format_size(size); }

}  // namespace racelab::alloc
