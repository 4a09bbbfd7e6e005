// racelab alloc diff A B: what changed in memory between two runs (two traces), or between two
// iterations of one (TRACE --from I --to J): segments and reserved bytes added and removed, by pool
// and by call site, and the side that grew, where. docs/allocator.md.
#include <fmt/format.h>

#include <filesystem>
#include <memory>

#include "alloc.h"
#include "alloc/diff.h"
#include "report/cli.h"
#include "util/errors.h"
#include "util/files.h"

namespace racelab::cli::alloccmd {

namespace {

namespace fs = std::filesystem;
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

// The one report of `path` (one device: --device picks it where the trace has several).
StabilityReport report_of(const Snapshot& snap, const std::string& path, const DiffArgs& a,
                          const std::optional<std::string>& stats, ReportSettings settings) {
  const std::vector<std::size_t> devices = pick_devices(snap, a.device, path);
  if (devices.size() > 1)
    throw InputError(
        fmt::format("{}: {} devices have traces; alloc diff compares one: pass --device N", path,
                    devices.size()));
  TraceReports got =
      analyse_trace(snap, path, devices, stats_for(path, stats), settings, replay_progress());
  clear_progress();
  for (const std::string& w : got.warnings) fmt::print("{}\n", paint(w, Colour::kYellow));
  return std::move(got.reports.front());
}

int diff_command(const DiffArgs& a) {
  const bool iterations = !a.from.empty() || !a.to.empty();
  if (iterations && (a.from.empty() || a.to.empty()))
    throw InputError("alloc diff: --from and --to go together (two iterations of one trace)");
  if (iterations && a.traces.size() != 1)
    throw InputError("alloc diff --from I --to J: give one trace (two iterations of it)");
  if (!iterations && a.traces.size() != 2)
    throw InputError(
        "alloc diff: give two traces (A B), or one with --from I --to J (two of its iterations)");
  if (a.iterations.size() > a.traces.size())
    throw InputError("--iterations: at most one stats JSON per trace");
  ReportSettings settings;
  if (a.settle >= 0) settings.settle = static_cast<std::size_t>(a.settle);
  settings.dev = a.dev;
  auto stats_of = [&](std::size_t k) -> std::optional<std::string> {
    if (k < a.iterations.size()) return a.iterations[k];
    return std::nullopt;
  };
  DiffSide sa, sb;
  for (const std::string& t : a.traces)
    report::expect_file(t, report::FileKind::kSnapshot, "alloc diff TRACE");
  for (const std::string& s : a.iterations)
    report::expect_file(s, report::FileKind::kStats, "alloc diff --iterations");
  if (iterations) {
    const std::string& path = a.traces.front();
    const Snapshot snap = read_snapshot(path);
    settings.segments_at = a.from;
    sa = iteration_side(report_of(snap, path, a, stats_of(0), settings), snap.stacks, a.from);
    settings.segments_at = a.to;
    sb = iteration_side(report_of(snap, path, a, stats_of(0), settings), snap.stacks, a.to);
  } else {
    const Snapshot snap_a = read_snapshot(a.traces[0]);
    sa = run_side(report_of(snap_a, a.traces[0], a, stats_of(0), settings), snap_a.stacks);
    const Snapshot snap_b = read_snapshot(a.traces[1]);
    sb = run_side(report_of(snap_b, a.traces[1], a, stats_of(1), settings), snap_b.stacks);
  }
  if (sa.name == sb.name) {  // two runs of one script: the same trace name
    sa.name = "A " + sa.name;
    sb.name = "B " + sb.name;
  }
  const MemoryDiff d = diff_sides(sa, sb);
  const std::vector<std::string> lines = diff_lines(d);
  for (std::size_t k = 0; k < lines.size(); ++k)
    fmt::print("{}\n", k == 0 && !d.grew.empty() ? paint(lines[k], Colour::kRed) : lines[k]);
  if (!a.out.empty()) {
    ensure_directory(a.out);
    const fs::path file = fs::path(a.out) / "alloc-diff.json";
    write_file_atomic(file, diff_json(d).dump(1) + "\n");
    fmt::print("wrote {}\n", file.string());
  }
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
