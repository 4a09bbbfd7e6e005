#pragma once
// FNV-1a 64-bit: a small, stable, platform-independent content hash. Schedule files record the
// hash of the subject they were recorded against, so it must never change between builds.
#include <cstdint>
#include <string>
#include <string_view>

namespace racelab {

inline std::uint64_t fnv1a64(std::string_view data, std::uint64_t h = 0xcbf29ce484222325ULL) {
  for (unsigned char c : data) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::string hex64(std::uint64_t v);

}  // namespace racelab
