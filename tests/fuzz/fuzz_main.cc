// libFuzzer entry points: one executable per target, chosen at compile time (RACELAB_FUZZ_TARGET).
#include <cstddef>
#include <cstdint>

#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  racelab::fuzz::RACELAB_FUZZ_TARGET(data, size);
  return 0;
}
