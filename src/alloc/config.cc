#include "alloc/config.h"

#include <fmt/format.h>

#include <bit>
#include <charconv>
#include <vector>

#include "alloc/pickle.h"
#include "util/errors.h"

namespace racelab::alloc {

std::uint64_t Config::divisions_for(std::uint64_t size) const {
  // CUDAAllocatorConfig::roundup_power2_divisions: interval index log2(size) - log2(1 MiB),
  // clamped to [0, 15].
  const int log_size = 63 - std::countl_zero(size | 1);
  int index = log_size - 20;
  index = std::max(0, std::min(index, static_cast<int>(kRoundupIntervals) - 1));
  return roundup_power2_divisions[static_cast<std::size_t>(index)];
}

std::string Config::describe() const {
  std::string div;
  bool uniform = true;
  for (auto d : roundup_power2_divisions) uniform = uniform && d == roundup_power2_divisions[0];
  if (uniform) {
    div = fmt::format("{}", roundup_power2_divisions[0]);
  } else {
    div = "[";
    for (std::size_t k = 0; k < kRoundupIntervals; ++k) {
      div +=
          fmt::format("{}{}:{}", k ? "," : "", std::uint64_t(1) << k, roundup_power2_divisions[k]);
    }
    div += "]";
  }
  std::string s = fmt::format(
      "expandable_segments:{},max_split_size_mb:{},roundup_power2_divisions:{},"
      "garbage_collection_threshold:{}",
      expandable_segments ? "True" : "False",
      max_split_size == UINT64_MAX ? std::string("unlimited")
                                   : fmt::format("{}", max_split_size / kMiB),
      div, garbage_collection_threshold);
  if (max_non_split_rounding != 20 * kMiB) {
    s += fmt::format(",max_non_split_rounding_mb:{}", max_non_split_rounding / kMiB);
  }
  if (memory_fraction > 0) s += fmt::format(" (memory fraction {})", memory_fraction);
  return s;
}

namespace {

[[noreturn]] void bad(std::string_view key, const std::string& why) {
  throw InputError(fmt::format("allocator config: {}: {}", key, why));
}

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

std::uint64_t to_uint(std::string_view key, const std::string& v) {
  std::uint64_t out = 0;
  const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || p != v.data() + v.size()) {
    bad(key, fmt::format("expected a non-negative integer, got '{}'", v));
  }
  return out;
}

bool is_pow2(std::uint64_t v) { return v && !(v & (v - 1)); }

// Splits at commas outside brackets.
std::vector<std::string> split_options(std::string_view text) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char c : text) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!trim(cur).empty() || !out.empty()) out.push_back(trim(cur));
  return out;
}

void parse_divisions(Config& c, std::string_view key, const std::string& v) {
  if (v.empty()) bad(key, "expected a number of divisions or a [size_mb:divisions,...] list");
  if (v.front() != '[') {
    const std::uint64_t d = to_uint(key, v);
    if (d != 0 && !is_pow2(d)) bad(key, fmt::format("divisions must be a power of 2, got {}", d));
    c.roundup_power2_divisions.fill(d);
    return;
  }
  if (v.back() != ']') bad(key, "a list must end with ']'");
  // Entries "size_mb:divisions" set the interval of that size; the first one also fills every
  // smaller interval, ">:divisions" fills every interval above the last one named.
  const std::string inner = v.substr(1, v.size() - 2);
  std::size_t last_index = 0;
  bool first = true;
  std::size_t start = 0;
  while (start <= inner.size()) {
    std::size_t end = inner.find(',', start);
    if (end == std::string::npos) end = inner.size();
    const std::string entry = trim(std::string_view(inner).substr(start, end - start));
    start = end + 1;
    const auto colon = entry.find(':');
    if (colon == std::string::npos)
      bad(key, fmt::format("expected size_mb:divisions, got '{}'", entry));
    const std::string lhs = trim(entry.substr(0, colon));
    const std::uint64_t d = to_uint(key, trim(entry.substr(colon + 1)));
    if (!is_pow2(d)) bad(key, fmt::format("divisions must be a power of 2, got {}", d));
    if (lhs == ">") {
      for (std::size_t k = first ? 0 : last_index + 1; k < kRoundupIntervals; ++k) {
        c.roundup_power2_divisions[k] = d;
      }
    } else {
      const std::uint64_t mb = to_uint(key, lhs);
      if (!is_pow2(mb)) bad(key, fmt::format("interval sizes must be powers of 2, got {}", mb));
      std::size_t index = static_cast<std::size_t>(63 - std::countl_zero(mb));
      index = std::min(index, kRoundupIntervals - 1);
      if (first) {
        for (std::size_t k = 0; k < index; ++k) c.roundup_power2_divisions[k] = d;
      }
      c.roundup_power2_divisions[index] = d;
      last_index = index;
    }
    first = false;
    if (end == inner.size()) break;
  }
}

bool parse_bool(std::string_view key, const std::string& v) {
  if (v == "True" || v == "true" || v == "1") return true;
  if (v == "False" || v == "false" || v == "0") return false;
  bad(key, fmt::format("expected True or False, got '{}'", v));
}

}  // namespace

Config parse_config(std::string_view text, Config c) {
  if (!c.conf.empty() && !trim(text).empty()) c.conf += ",";
  c.conf += trim(text);
  for (const std::string& opt : split_options(text)) {
    if (opt.empty()) continue;
    const auto colon = opt.find(':');
    if (colon == std::string::npos) bad(opt, "expected key:value");
    const std::string key = trim(opt.substr(0, colon));
    const std::string v = trim(opt.substr(colon + 1));
    if (key == "max_split_size_mb") {
      const std::uint64_t mb = to_uint(key, v);
      if (mb <= 20) bad(key, fmt::format("must be > 20 (MiB), got {}", mb));
      c.max_split_size = mb >= UINT64_MAX / kMiB ? UINT64_MAX : mb * kMiB;
    } else if (key == "max_non_split_rounding_mb") {
      const std::uint64_t mb = to_uint(key, v);
      if (mb < 20) bad(key, fmt::format("must be >= 20 (MiB), got {}", mb));
      c.max_non_split_rounding = mb * kMiB;
    } else if (key == "roundup_power2_divisions") {
      parse_divisions(c, key, v);
    } else if (key == "garbage_collection_threshold") {
      double t = 0;
      try {
        std::size_t used = 0;
        t = std::stod(v, &used);
        if (used != v.size()) throw std::invalid_argument(v);
      } catch (const std::exception&) {
        bad(key, fmt::format("expected a number, got '{}'", v));
      }
      if (!(t > 0 && t < 1)) bad(key, fmt::format("must be in (0, 1), got {}", v));
      c.garbage_collection_threshold = t;
    } else if (key == "expandable_segments") {
      c.expandable_segments = parse_bool(key, v);
    } else if (key == "backend") {
      if (v != "native") {
        bad(key, fmt::format("only the native caching allocator is modelled, got '{}'", v));
      }
    } else if (key == "release_lock_on_cudamalloc" || key == "pinned_use_cuda_host_register" ||
               key == "pinned_num_register_threads" || key == "pinned_use_background_threads" ||
               key == "graph_capture_record_stream_reuse" ||
               key == "expandable_segments_handle_type" ||
               key == "pinned_reserve_segment_size_mb") {
      // Accepted; they do not change where blocks are placed.
    } else {
      bad(key,
          "unknown option (known: expandable_segments, max_split_size_mb, "
          "roundup_power2_divisions, garbage_collection_threshold, "
          "max_non_split_rounding_mb, backend and the pinned-memory options)");
    }
  }
  return c;
}

Config config_from_snapshot(const PickleValue* s, const std::string& origin) {
  Config c;
  if (!s || !s->is_dict()) return c;
  auto where = [&](const char* key) {
    return fmt::format("{}: allocator_settings.{}", origin, key);
  };
  if (const PickleValue* v = s->get("PYTORCH_CUDA_ALLOC_CONF"); v && v->is_str()) c.conf = v->s;
  if (const PickleValue* v = s->get("max_split_size"); v && v->is_int()) {
    c.max_split_size = v->i < 0 ? UINT64_MAX : static_cast<std::uint64_t>(v->i);
  }
  if (const PickleValue* v = s->get("garbage_collection_threshold")) {
    if (v->type == PickleType::kFloat)
      c.garbage_collection_threshold = v->f;
    else if (v->is_int())
      c.garbage_collection_threshold = static_cast<double>(v->i);
    else
      throw InputError(where("garbage_collection_threshold") + ": expected a float");
  }
  if (const PickleValue* v = s->get("expandable_segments")) {
    if (v->type != PickleType::kBool)
      throw InputError(where("expandable_segments") + ": expected a bool");
    c.expandable_segments = v->b;
  }
  const PickleValue* rd = s->get("roundup_power2_divisions");
  if (const PickleValue* v = rd; v && v->is_dict()) {
    for (const auto& [k, d] : v->dict) {
      if (k->type != PickleType::kStr || !d->is_int() || d->i < 0) {
        throw InputError(where("roundup_power2_divisions") + ": expected {\"<MiB>\": int}");
      }
      std::uint64_t mb = 0;
      const auto [p, ec] = std::from_chars(k->s.data(), k->s.data() + k->s.size(), mb);
      if (ec != std::errc() || !is_pow2(mb)) {
        throw InputError(where("roundup_power2_divisions") + ": key '" + k->s +
                         "' is not a power of 2");
      }
      const auto index = std::min<std::size_t>(63 - std::countl_zero(mb), kRoundupIntervals - 1);
      c.roundup_power2_divisions[index] = static_cast<std::uint64_t>(d->i);
    }
  } else if (const PickleValue* v = rd; v && v->is_list()) {
    for (std::size_t k = 0; k < v->items.size() && k < kRoundupIntervals; ++k) {
      if (v->items[k]->is_int())
        c.roundup_power2_divisions[k] = static_cast<std::uint64_t>(v->items[k]->i);
    }
  }
  // Options the snapshot does not record (max_non_split_rounding_mb) come from the conf string.
  if (c.conf.find("max_non_split_rounding_mb") != std::string::npos) {
    Config parsed = parse_config(c.conf);
    c.max_non_split_rounding = parsed.max_non_split_rounding;
  }
  return c;
}

}  // namespace racelab::alloc
