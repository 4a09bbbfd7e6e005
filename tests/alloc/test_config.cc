// PYTORCH_CUDA_ALLOC_CONF parsing and the rounding rules that depend on it.
#include <string>

#include "alloc/allocator.h"
#include "alloc/config.h"
#include "alloc/snapshot.h"
#include "alloc_data.h"
#include "catch.h"
#include "util/errors.h"

using namespace racelab;
using namespace racelab::alloc;

namespace {

std::string config_error(const std::string& text) {
  try {
    parse_config(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace

TEST_CASE("config: PyTorch's options parse to the values it uses", "[config]") {
  const Config c = parse_config(
      "expandable_segments:True, max_split_size_mb:64,roundup_power2_divisions:4,"
      "garbage_collection_threshold:0.6");
  CHECK(c.expandable_segments);
  CHECK(c.max_split_size == 64 * kMiB);
  CHECK(c.garbage_collection_threshold == 0.6);
  for (auto d : c.roundup_power2_divisions) CHECK(d == 4);
  const Config d = parse_config("");
  CHECK_FALSE(d.expandable_segments);
  CHECK(d.max_split_size == UINT64_MAX);
  CHECK(d.max_non_split_rounding == 20 * kMiB);
}

TEST_CASE("config: the bracket form of roundup_power2_divisions matches what PyTorch recorded",
          "[config]") {
  // tools/alloc-capture recorded this trace with the same string; the snapshot holds PyTorch's
  // resulting per-interval table.
  const auto path = testing::traces_dir() / "snap_sdpa_chunked_rbrackets_1.pickle";
  const Snapshot s = read_snapshot(path);
  const Config recorded = config_from_snapshot(s.root->get("allocator_settings"), path.string());
  const Config parsed =
      parse_config("roundup_power2_divisions:[256:1,512:2,1024:4,>:8],max_split_size_mb:40");
  CHECK(parsed.roundup_power2_divisions == recorded.roundup_power2_divisions);
  CHECK(parsed.max_split_size == recorded.max_split_size);
  CHECK(recorded.roundup_power2_divisions[0] == 1);
  CHECK(recorded.roundup_power2_divisions[9] == 2);
  CHECK(recorded.roundup_power2_divisions[10] == 4);
  CHECK(recorded.roundup_power2_divisions[15] == 8);
}

TEST_CASE("config: invalid settings are one clear error", "[config]") {
  CHECK(config_error("max_split_size_mb:20").find("must be > 20") != std::string::npos);
  CHECK(config_error("roundup_power2_divisions:3").find("power of 2") != std::string::npos);
  CHECK(config_error("roundup_power2_divisions:[300:2]").find("powers of 2") != std::string::npos);
  CHECK(config_error("garbage_collection_threshold:1.5").find("(0, 1)") != std::string::npos);
  CHECK(config_error("garbage_collection_threshold:abc").find("expected a number") !=
        std::string::npos);
  CHECK(config_error("expandable_segments:maybe").find("True or False") != std::string::npos);
  CHECK(config_error("backend:cudaMallocAsync").find("only the native") != std::string::npos);
  CHECK(config_error("max_split_size:64").find("unknown option") != std::string::npos);
  CHECK(config_error("expandable_segments").find("key:value") != std::string::npos);
  CHECK(config_error("max_split_size_mb:-5").find("non-negative integer") != std::string::npos);
}

TEST_CASE("config: rounding follows round_size and roundup_power2_next_division", "[config]") {
  const Config plain;
  CHECK(CachingAllocator::round_size(1, plain) == 512);
  CHECK(CachingAllocator::round_size(512, plain) == 512);
  CHECK(CachingAllocator::round_size(513, plain) == 1024);
  CHECK(CachingAllocator::round_size(3 * kMiB + 1, plain) == 3 * kMiB + 512);
  // 4 divisions between 8 KiB and 16 KiB: steps of 2 KiB (plain rounding would give 9216).
  Config four = parse_config("roundup_power2_divisions:4");
  CHECK(CachingAllocator::round_size(9000, four) == 10240);
  // Not above 512 * divisions: plain 512-byte rounding (1200 -> 1536, not PyTorch's comment's
  // 1280).
  CHECK(CachingAllocator::round_size(1200, four) == 1536);
  CHECK(CachingAllocator::round_size(1024, four) == 1024);
  // Sizes not above 512 * divisions keep plain rounding.
  CHECK(CachingAllocator::round_size(1500, parse_config("roundup_power2_divisions:4")) == 1536);
  CHECK(CachingAllocator::round_size(5 * kMiB + 1, four) == 6 * kMiB);
  // Per-interval divisions: 1 (none) below 512 MiB in this table.
  const Config table = parse_config("roundup_power2_divisions:[256:1,512:2,1024:4,>:8]");
  CHECK(CachingAllocator::round_size(300 * kMiB + 1, table) == 300 * kMiB + 512);
  CHECK(CachingAllocator::round_size(600 * kMiB, table) == 768 * kMiB);
  // Segment sizes: 2 MiB for small, 20 MiB up to 10 MiB, else rounded up to 2 MiB.
  CHECK(CachingAllocator::allocation_size(kMiB) == 2 * kMiB);
  CHECK(CachingAllocator::allocation_size(kMiB + 512) == 20 * kMiB);
  CHECK(CachingAllocator::allocation_size(10 * kMiB - 512) == 20 * kMiB);
  CHECK(CachingAllocator::allocation_size(10 * kMiB) == 10 * kMiB);
  CHECK(CachingAllocator::allocation_size(15 * kMiB + 512) == 16 * kMiB);
  CHECK(format_bytes(512) == "512 bytes");
  CHECK(format_bytes(20 * kMiB) == "20.00 MiB");
}
