// racelab alloc {replay,report,whatif,diff,convert}: CUDA caching-allocator traces (memory_viz
// snapshots) replayed through the allocator model. docs/allocator.md. This file registers the
// family and the options its subcommands share; each subcommand has its own file (alloc.h).
#include "alloc.h"

namespace racelab::cli {

namespace alloccmd {

void add_device_select(CLI::App* cmd, int& device) {
  cmd->add_option("--device", device,
                  "only this device's trace (default: every device with a trace)")
      ->check(integer_check(0, 1023));
}

void add_device_options(CLI::App* cmd, alloc::DeviceMemory& d) {
  cmd->add_option(
      "--device-memory", d.device_memory,
      "memory the allocator may use, e.g. 80GiB (default: the H200 the fixtures ran on, "
      "139.80 GiB less its 527 MiB CUDA context)");
  cmd->add_option("--memory-fraction", d.memory_fraction,
                  "torch.cuda.set_per_process_memory_fraction the run used (garbage collection "
                  "acts only with one set)");
}

alloc::ProgressFor replay_progress() {
  return [](const std::string& what) { return count_progress(what, "events"); };
}

}  // namespace alloccmd

void add_alloc(CLI::App& app, Runner& run) {
  auto* alloc = app.add_subcommand(
      "alloc", "CUDA caching-allocator traces: replay, report, what-if, diff, convert");
  alloc->require_subcommand(1);
  alloccmd::add_replay(alloc, run);
  alloccmd::add_report(alloc, run);
  alloccmd::add_whatif(alloc, run);
  alloccmd::add_convert(alloc, run);
  alloccmd::add_diff(alloc, run);
}

}  // namespace racelab::cli
