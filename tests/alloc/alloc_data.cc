#include "alloc_data.h"

#include <cstdlib>

#include "catch.h"

namespace racelab::alloc::testing {

namespace {

std::filesystem::path data_root() {
  const char* d = std::getenv("RACELAB_ALLOC_DATA");
  REQUIRE(d != nullptr);
  return d;
}

}  // namespace

std::filesystem::path fixtures_dir() { return data_root() / "fixtures-h200"; }
std::filesystem::path traces_dir() { return data_root() / "h200-traces"; }
std::filesystem::path live_traces_dir() { return data_root() / "live-h200"; }
std::filesystem::path frames_traces_dir() { return data_root() / "train-queue-frames-h200"; }

bool same_value(const PickleValue& a, const PickleValue& b) {
  if (a.type != b.type) return false;
  switch (a.type) {
    case PickleType::kNone:
      return true;
    case PickleType::kBool:
      return a.b == b.b;
    case PickleType::kInt:
      return a.i == b.i;
    case PickleType::kFloat:
      return a.f == b.f;
    case PickleType::kStr:
    case PickleType::kBytes:
      return a.s == b.s;
    case PickleType::kList:
    case PickleType::kTuple:
      if (a.items.size() != b.items.size()) return false;
      for (std::size_t k = 0; k < a.items.size(); ++k) {
        if (!same_value(*a.items[k], *b.items[k])) return false;
      }
      return true;
    case PickleType::kDict:
      if (a.dict.size() != b.dict.size()) return false;
      for (std::size_t k = 0; k < a.dict.size(); ++k) {
        if (!same_value(*a.dict[k].first, *b.dict[k].first)) return false;
        if (!same_value(*a.dict[k].second, *b.dict[k].second)) return false;
      }
      return true;
  }
  return false;
}

}  // namespace racelab::alloc::testing
