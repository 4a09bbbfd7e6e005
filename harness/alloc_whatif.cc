// racelab alloc whatif TRACE --config CONF...: the same trace under other allocator settings; and
// racelab alloc convert IN OUT: a snapshot pickle as JSON or back. docs/allocator.md.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <memory>

#include "alloc.h"
#include "alloc/outputs.h"
#include "alloc/runs.h"
#include "report/cli.h"
#include "util/errors.h"
#include "util/files.h"

namespace racelab::cli::alloccmd {

namespace {

namespace fs = std::filesystem;
using namespace racelab::alloc;

struct WhatifArgs {
  std::string trace;
  std::vector<std::string> configs;
  int device = -1;
  DeviceMemory dev;
  std::string out;
};

int whatif_command(const WhatifArgs& a) {
  report::expect_file(a.trace, report::FileKind::kSnapshot, "alloc whatif TRACE");
  const Snapshot snap = read_snapshot(a.trace);
  const std::vector<std::size_t> devices = pick_devices(snap, a.device, a.trace);
  if (!a.out.empty()) ensure_directory(a.out);
  std::vector<std::pair<std::size_t, WhatifRun>> runs;
  for (std::size_t device : devices) {
    const WhatifRun& w = runs.emplace_back(device, whatif_device(snap, a.trace, device, a.configs,
                                                                 a.dev, replay_progress()))
                             .second;
    fmt::print("trace: {} (device {}: {} allocations)\n", a.trace, device, w.allocations);
    fmt::print("{:<58} {:>13} {:>14} {:>9} {:>13} {:>8} {:>5}\n", "config", "peak reserved",
               "final reserved", "segments", "device allocs", "retries", "OOMs");
    for (const WhatifLine& l : w.lines) {
      fmt::print("{:<58} {:>13} {:>14} {:>9} {:>13} {:>8} {:>5}\n", l.name, mib(l.peak_reserved),
                 mib(l.final_reserved), l.segments, l.device_allocs, l.retries, l.ooms);
    }
    for (const WhatifLine& l : w.lines) {
      if (!l.first_oom.empty()) fmt::print("{}: {}\n", l.name, l.first_oom);
    }
  }
  if (!a.out.empty()) {
    fmt::print("wrote {}\n", fmt::join(write_whatif_outputs(a.out, a.trace, runs), ", "));
  }
  return kExitOk;
}

int convert_command(const std::string& in, const std::string& out) {
  report::expect_file(in, report::FileKind::kSnapshot, "alloc convert IN");
  const Snapshot snap = read_snapshot(in, SnapshotReader::kTree);  // every value, written back
  write_snapshot_value(out, *snap.root);
  fmt::print("wrote {} ({} device traces, {} segments)\n", out, snap.traces.size(),
             snap.segment_count);
  return kExitOk;
}

}  // namespace

void add_whatif(CLI::App* alloc, Runner& run) {
  auto wa = std::make_shared<WhatifArgs>();
  auto* wc = alloc->add_subcommand("whatif", "The same trace under other allocator settings");
  wc->add_option("trace", wa->trace, "snapshot")->required();
  wc->add_option("--config", wa->configs, "PYTORCH_CUDA_ALLOC_CONF settings (repeat)")->required();
  add_device_select(wc, wa->device);
  wc->add_option("--out", wa->out, "write whatif.json and whatif.html here");
  add_device_options(wc, wa->dev);
  wc->callback([&run, wa] { run = [wa] { return whatif_command(*wa); }; });
}

void add_convert(CLI::App* alloc, Runner& run) {
  auto ca = std::make_shared<std::pair<std::string, std::string>>();
  auto* cc =
      alloc->add_subcommand("convert", "Snapshot pickle <-> JSON (by the output's extension)");
  cc->add_option("input", ca->first, "snapshot (.pickle or .json)")->required();
  cc->add_option("output", ca->second, "output: .json for JSON, anything else for a pickle")
      ->required();
  cc->callback([&run, ca] { run = [ca] { return convert_command(ca->first, ca->second); }; });
}

}  // namespace racelab::cli::alloccmd
