#pragma once
// Test data for the allocator tests: the H200 traces unpacked by tests/CMakeLists.txt.
#include <filesystem>
#include <string>
#include <vector>

#include "alloc/pickle.h"

namespace racelab::alloc::testing {

std::filesystem::path fixtures_dir();     // the shared fixtures: snap_<variant>_1.pickle + stats
std::filesystem::path traces_dir();       // tools/alloc-capture traces under other settings
std::filesystem::path live_traces_dir();  // racelab live alloc traces (LibTorch's C++ API)
// racelab live python --alloc captures of tools/pipelines/train_queue_torch.py, with frames.
std::filesystem::path frames_traces_dir();

// Deep structural equality (types and values; dict order included).
bool same_value(const PickleValue& a, const PickleValue& b);

}  // namespace racelab::alloc::testing
