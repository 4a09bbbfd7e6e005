#pragma once
// The fuzz targets: one function per reader, each returning normally for any input. Bad input
// must end in InputError (caught here); anything else (a crash, another exception, a sanitizer
// report) is a bug. Built as libFuzzer targets in the `fuzz` preset and, in every build, as a
// regression driver over the seed corpus and every input that once crashed (tests/fuzz/).
#include <cstddef>
#include <cstdint>

namespace racelab::fuzz {

void pickle(const std::uint8_t* data, std::size_t size);
void scenario(const std::uint8_t* data, std::size_t size);
void schedule(const std::uint8_t* data, std::size_t size);

}  // namespace racelab::fuzz
