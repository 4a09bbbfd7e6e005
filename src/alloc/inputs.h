#pragma once
// What racelab alloc's commands take from their options and the snapshot before replaying: the
// device memory (--device-memory, --memory-fraction), the devices whose traces to replay
// (--device), the allocator settings (the snapshot's or --config), a report's name and the stats
// JSON beside a trace. docs/allocator.md.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "alloc/config.h"
#include "alloc/snapshot.h"

namespace racelab::alloc {

// --device-memory and --memory-fraction as given.
struct DeviceMemory {
  std::string device_memory;  // total device memory, e.g. "140GiB" or bytes; empty: the H200's
  double memory_fraction = 0;
};

// "150109880320", "140GiB", "512MiB", "1.5KiB": bytes. Throws InputError naming `option`.
std::uint64_t parse_bytes(const std::string& text, const std::string& option);

// Applies --device-memory (the allocator may use all of it: no CUDA context to subtract) and
// --memory-fraction to `c`. Throws InputError for a bad size or a fraction outside [0, 1].
void apply_device(Config& c, const DeviceMemory& d);

// Which devices' traces to replay: every device with events, or the one `device` names (>= 0).
// Throws InputError when that device has no trace, or when no device has events.
std::vector<std::size_t> pick_devices(const Snapshot& s, int device, const std::string& origin);

// The settings to replay under: the snapshot's, or `configs` (PYTORCH_CUDA_ALLOC_CONF texts
// applied in order over the defaults) when given; then the device memory.
Config trace_config(const Snapshot& s, const std::string& origin,
                    const std::vector<std::string>& configs, const DeviceMemory& dev);

// A trace's name in reports: its file's stem without "snap_" (snap_sdpa_fused_1.pickle ->
// sdpa_fused_1).
std::string trace_name(const std::string& path);

// The stats JSON of `trace`: `given` when there is one (--iterations; empty: none), else
// stats_<name>.json beside the trace when it exists, else empty (no stats).
std::filesystem::path stats_for(const std::string& trace, const std::optional<std::string>& given);

// A progress callback for the replay that `what` describes ("replaying snap.pickle"), or none.
using ProgressFor =
    std::function<std::function<void(std::size_t done, std::size_t total)>(const std::string&)>;

// "384 MiB": how the commands print sizes.
std::string mib(std::uint64_t bytes);

}  // namespace racelab::alloc
