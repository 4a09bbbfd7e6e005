#pragma once
// A map from device address to model block for replay's hot path: open addressing with linear
// probing and backward-shift deletion (no tombstones), about twice as fast here as
// std::unordered_map. Addresses are never 0 (the empty slot).
#include <cstdint>
#include <vector>

namespace racelab::alloc {

template <class V>
class AddrMap {
 public:
  AddrMap() : slots_(1024) {}

  V* find(std::uint64_t key) {
    for (std::size_t i = index(key);; i = (i + 1) & mask()) {
      if (slots_[i].key == key) return &slots_[i].value;
      if (slots_[i].key == 0) return nullptr;
    }
  }
  void put(std::uint64_t key, V value) {
    if ((size_ + 1) * 4 > slots_.size() * 3) grow();
    for (std::size_t i = index(key);; i = (i + 1) & mask()) {
      if (slots_[i].key == key) {
        slots_[i].value = value;
        return;
      }
      if (slots_[i].key == 0) {
        slots_[i] = {key, value};
        ++size_;
        return;
      }
    }
  }
  void erase(std::uint64_t key) {
    std::size_t i = index(key);
    while (slots_[i].key != key) {
      if (slots_[i].key == 0) return;
      i = (i + 1) & mask();
    }
    // Backward-shift: move later entries of the probe run into the hole.
    for (std::size_t j = (i + 1) & mask();; j = (j + 1) & mask()) {
      if (slots_[j].key == 0) break;
      const std::size_t home = index(slots_[j].key);
      if (((j - home) & mask()) >= ((j - i) & mask())) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i] = {};
    --size_;
  }
  std::size_t size() const { return size_; }

 private:
  struct Slot {
    std::uint64_t key = 0;
    V value{};
  };
  std::size_t mask() const { return slots_.size() - 1; }
  std::size_t index(std::uint64_t key) const {
    return static_cast<std::size_t>((key >> 9) * 0x9E3779B97F4A7C15ULL >> 20) & mask();
  }
  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    size_ = 0;
    for (const Slot& s : old) {
      if (s.key != 0) put(s.key, s.value);
    }
  }
  std::vector<Slot> slots_;
  std::size_t size_ = 0;
};

}  // namespace racelab::alloc
