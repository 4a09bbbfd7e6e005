// racelab alloc diff A B: what changed in memory between two runs (two traces), or between two
// iterations of one (TRACE --from I --to J): segments and reserved bytes added and removed, by pool
// and by call site, and the side that grew, where. docs/allocator.md.
#include <fmt/format.h>

#include <memory>

#include "alloc.h"
#include "alloc/diff.h"
#include "report/cli.h"
#include "run/alloc.h"
#include "util/errors.h"

namespace racelab::cli::alloccmd {

namespace {

using namespace racelab::alloc;

struct DiffArgs {
  std::vector<std::string> traces;
  std::vector<std::string> iterations;
  std::string from, to;
  std::int64_t settle = -1;
  int device = -1;
  DeviceMemory dev;
  std::string out;
};

int diff_command(const DiffArgs& a) {
  run::AllocDiffOptions o{.traces = a.traces,
                          .iterations = a.iterations,
                          .from = a.from,
                          .to = a.to,
                          .device = a.device,
                          .out = a.out,
                          .progress = replay_progress()};
  if (a.settle >= 0) o.settings.settle = static_cast<std::size_t>(a.settle);
  o.settings.dev = a.dev;
  const run::AllocDiffResult got = run::alloc_diff(
      o, {.on_warnings =
              [](const std::vector<std::string>& warnings) {
                clear_progress();
                for (const std::string& w : warnings) fmt::print("{}\n", paint(w, Colour::kYellow));
              },
          .on_diff =
              [](const MemoryDiff& d) {
                const std::vector<std::string> lines = diff_lines(d);
                for (std::size_t k = 0; k < lines.size(); ++k)
                  fmt::print("{}\n",
                             k == 0 && !d.grew.empty() ? paint(lines[k], Colour::kRed) : lines[k]);
              }});
  if (!got.written.empty()) fmt::print("wrote {}\n", got.written);
  return kExitOk;
}

}  // namespace

void add_diff(CLI::App* alloc, Runner& run) {
  auto da = std::make_shared<DiffArgs>();
  auto* dc = alloc->add_subcommand(
      "diff", "What changed in memory between two traces, or two iterations of one");
  dc->add_option("traces", da->traces, "A B (two snapshots), or one with --from and --to")
      ->required();
  dc->add_option("--iterations", da->iterations,
                 "stats JSON of each trace, in order (default: stats_<name>.json beside it)");
  dc->add_option("--from", da->from, "with one trace: the iteration (or window) A ends at");
  dc->add_option("--to", da->to, "with one trace: the iteration (or window) B ends at");
  dc->add_option("--settle", da->settle,
                 "iterations allowed to allocate before growth counts (as alloc report)")
      ->check(integer_check(0));
  add_device_select(dc, da->device);
  dc->add_option("--out", da->out, "write alloc-diff.json here");
  add_device_options(dc, da->dev);
  dc->callback([&run, da] { run = [da] { return diff_command(*da); }; });
}

}  // namespace racelab::cli::alloccmd
