#pragma once
// Byte sizes as PyTorch prints them (c10/cuda/CUDACachingAllocator.cpp format_size): "512 bytes",
// "1.50 KiB", "20.00 MiB", "276.00 GiB", two decimals, binary units.
#include <fmt/format.h>

#include <cstdint>
#include <string>

namespace racelab {

inline std::string format_size(std::uint64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (bytes <= 1024) return fmt::format("{} bytes", bytes);
  if (bytes <= 1048576) return fmt::format("{:.2f} KiB", b / 1024.0);
  if (bytes <= 1073741824) return fmt::format("{:.2f} MiB", b / 1048576.0);
  return fmt::format("{:.2f} GiB", b / 1073741824.0);
}

}  // namespace racelab
