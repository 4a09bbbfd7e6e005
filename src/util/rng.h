#pragma once
// Deterministic pseudo-random numbers. std::uniform_int_distribution differs between standard
// libraries, so strategies draw from this generator only: the same seed gives the same schedule on
// every platform racelab builds on.
#include <cstdint>

namespace racelab {

inline std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// xoshiro256** (Blackman & Vigna), seeded through splitmix64.
class Rng {
 public:
  explicit Rng(std::uint64_t seed = 0) { reseed(seed); }

  void reseed(std::uint64_t seed) {
    std::uint64_t sm = seed;
    for (auto& word : s_) word = splitmix64(sm);
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, bound); bound > 0. Lemire's multiply-shift with rejection, so no modulo bias.
  std::uint64_t below(std::uint64_t bound) {
    for (;;) {
      const std::uint64_t x = next();
      __extension__ using u128 = unsigned __int128;
      const u128 m = static_cast<u128>(x) * bound;
      const std::uint64_t low = static_cast<std::uint64_t>(m);
      if (low >= bound || low >= (-bound) % bound) return static_cast<std::uint64_t>(m >> 64);
    }
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

// The seed of execution `index` of an exploration seeded with `seed`: executions are independent,
// so any one of them can be re-run (or run on another worker) without running the ones before it.
inline std::uint64_t execution_seed(std::uint64_t seed, std::uint64_t index) {
  std::uint64_t s = seed ^ (index * 0xd1342543de82ef95ULL);
  splitmix64(s);
  return splitmix64(s);
}

}  // namespace racelab
