#include "alloc/inputs.h"

#include <fmt/format.h>

#include "util/errors.h"

namespace racelab::alloc {

namespace fs = std::filesystem;

std::uint64_t parse_bytes(const std::string& text, const std::string& option) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    throw InputError(fmt::format(
        "{}: expected a size like 150109880320, 140GiB or 512MiB, got '{}'", option, text));
  }
  const std::string unit = text.substr(used);
  double mult = 1;
  if (unit == "" || unit == "B")
    mult = 1;
  else if (unit == "KiB")
    mult = 1024.0;
  else if (unit == "MiB")
    mult = 1024.0 * 1024;
  else if (unit == "GiB")
    mult = 1024.0 * 1024 * 1024;
  else
    throw InputError(fmt::format("{}: unknown unit '{}' (use B, KiB, MiB or GiB)", option, unit));
  if (!(v > 0)) throw InputError(fmt::format("{}: must be positive, got '{}'", option, text));
  return static_cast<std::uint64_t>(v * mult);
}

void apply_device(Config& c, const DeviceMemory& d) {
  if (!d.device_memory.empty()) {
    // What the allocator may use: cudaMalloc fails beyond it (no CUDA context to subtract).
    c.device_total = parse_bytes(d.device_memory, "--device-memory");
    c.device_other = 0;
  }
  if (d.memory_fraction < 0 || d.memory_fraction > 1) {
    throw InputError(
        fmt::format("--memory-fraction: must be in [0, 1], got {}", d.memory_fraction));
  }
  c.memory_fraction = d.memory_fraction;
}

std::vector<std::size_t> pick_devices(const Snapshot& s, int device, const std::string& origin) {
  if (device >= 0) {
    if (static_cast<std::size_t>(device) >= s.traces.size()) {
      throw InputError(fmt::format("{}: no trace for device {} ({} device traces)", origin, device,
                                   s.traces.size()));
    }
    return {static_cast<std::size_t>(device)};
  }
  std::vector<std::size_t> out;
  for (std::size_t d = 0; d < s.traces.size(); ++d) {
    if (!s.traces[d].empty()) out.push_back(d);
  }
  if (out.empty()) {
    throw InputError(
        fmt::format("{}: the trace is empty: record with "
                    "torch.cuda.memory._record_memory_history() before allocating",
                    origin));
  }
  return out;
}

Config trace_config(const Snapshot& s, const std::string& origin,
                    const std::vector<std::string>& configs, const DeviceMemory& dev) {
  Config c = config_from_snapshot(s.root->get("allocator_settings"), origin);
  if (!configs.empty()) {
    Config fresh;
    for (const auto& text : configs) fresh = parse_config(text, fresh);
    c = fresh;
  }
  apply_device(c, dev);
  return c;
}

std::string trace_name(const std::string& path) {
  std::string s = fs::path(path).stem().string();
  if (s.rfind("snap_", 0) == 0) s = s.substr(5);
  return s;
}

fs::path stats_for(const std::string& trace, const std::optional<std::string>& given) {
  if (given) return *given;
  const fs::path beside = fs::path(trace).parent_path() / ("stats_" + trace_name(trace) + ".json");
  if (fs::exists(beside)) return beside;
  return {};
}

std::string mib(std::uint64_t b) {
  return fmt::format("{:.0f} MiB", static_cast<double>(b) / kMiB);
}

}  // namespace racelab::alloc
