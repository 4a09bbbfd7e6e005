// racelab alloc replay TRACE: a memory_viz trace replayed through the allocator model, and with
// --compare checked against what the real allocator did. docs/allocator.md.
#include <fmt/format.h>

#include <filesystem>
#include <memory>

#include "alloc.h"
#include "alloc/outputs.h"
#include "alloc/runs.h"
#include "report/cli.h"
#include "util/errors.h"

namespace racelab::cli::alloccmd {

namespace {

namespace fs = std::filesystem;
using namespace racelab::alloc;

struct ReplayArgs {
  std::string trace;
  std::vector<std::string> config;
  bool compare = false;
  int device = -1;
  std::string out;
  DeviceMemory dev;
};

int replay_command(const ReplayArgs& a) {
  report::expect_file(a.trace, report::FileKind::kSnapshot, "alloc replay TRACE");
  const Snapshot snap = read_snapshot(a.trace);
  const std::vector<std::size_t> devices = pick_devices(snap, a.device, a.trace);
  const Config config = trace_config(snap, a.trace, a.config, a.dev);
  fmt::print("trace: {} ({} device trace(s) with events)\n", a.trace, devices.size());
  fmt::print("config: {}{}\n", config.describe(), a.config.empty() ? " (from the snapshot)" : "");
  if (snap.ignored_events) {
    fmt::print("ignored: {} events of actions this version does not know\n", snap.ignored_events);
  }
  std::vector<ReplayResult> results;
  results.reserve(devices.size());
  bool all_identical = true;
  for (std::size_t device : devices) {
    results.push_back(
        replay_device(snap, device, config, !a.out.empty(), a.trace, replay_progress()));
    const ReplayResult& r = results.back();
    fmt::print("device {}: {} events\n", device, snap.traces[device].size());
    if (r.unmatched_frees) {
      fmt::print(
          "  warning: {} frees of blocks the trace never allocated: record history from an empty "
          "allocator (before the first CUDA allocation) for an exact replay\n",
          r.unmatched_frees);
    }
    if (!r.empty_cache_at.empty()) {
      fmt::print("  empty_cache: {} calls inferred from the trace\n", r.empty_cache_at.size());
    }
    const Stats& st = r.stats;
    fmt::print(
        "  model: reserved {} (peak {}), {} segments, {} device allocations, {} device frees, {} "
        "retries, {} OOMs\n",
        mib(static_cast<std::uint64_t>(st.reserved_bytes[kAggregate].current)),
        mib(r.peak_reserved),
        config.expandable_segments ? static_cast<std::int64_t>(r.final_mapped_segments)
                                   : st.segment[kAggregate].current,
        st.num_device_alloc, st.num_device_free, st.num_alloc_retries, st.num_ooms);
    for (const auto& m : r.oom_messages) fmt::print("  model out of memory: {}\n", m);
    if (!a.compare) continue;
    fmt::print("{}{}\n", devices.size() > 1 ? fmt::format("device {}: ", device) : std::string(),
               paint(agreement_text(r), r.identical() ? Colour::kGreen : Colour::kRed));
    for (const auto& m : r.alloc_mismatches)
      fmt::print("  first differences: event {}: {}\n", m.event, m.text);
    for (const auto& m : r.segment_mismatches) fmt::print("  first differences: {}\n", m.text);
    if (r.real_ooms || r.model_ooms)
      fmt::print("  out of memory: real {}, model {}\n", r.real_ooms, r.model_ooms);
    all_identical = all_identical && r.identical() && r.real_ooms == 0;
  }
  if (!a.out.empty()) {
    const fs::path dir(a.out);
    write_replay_outputs(dir, snap, a.trace, config, devices, results);
    fmt::print("wrote {} (open in pytorch.org/memory_viz) and {}\n",
               (dir / "replay.pickle").string(), (dir / "replay.json").string());
  }
  if (!a.compare) return kExitOk;
  return all_identical ? kExitOk : kExitFound;
}

}  // namespace

void add_replay(CLI::App* alloc, Runner& run) {
  auto ra = std::make_shared<ReplayArgs>();
  auto* rc =
      alloc->add_subcommand("replay", "Replay a memory_viz trace through the allocator model");
  rc->add_option("trace", ra->trace,
                 "snapshot (.pickle from torch.cuda.memory._dump_snapshot, or .json)")
      ->required();
  rc->add_option("--config", ra->config,
                 "PYTORCH_CUDA_ALLOC_CONF settings to replay under (default: the snapshot's)");
  rc->add_flag("--compare", ra->compare,
               "check every placement and segment event against the trace (exit 0 only at 100%)");
  add_device_select(rc, ra->device);
  rc->add_option("--out", ra->out, "write replay.pickle (memory_viz) and replay.json here");
  add_device_options(rc, ra->dev);
  rc->callback([&run, ra] { run = [ra] { return replay_command(*ra); }; });
}

}  // namespace racelab::cli::alloccmd
