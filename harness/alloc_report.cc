// racelab alloc report TRACE...: is memory stable? The allocator's state at the end of every
// iteration (or window) and a verdict per trace; --expect makes it a CI check. docs/allocator.md.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <memory>

#include "alloc.h"
#include "alloc/runs.h"
#include "report/cli.h"
#include "run/alloc.h"
#include "sched/expectations.h"
#include "transformers.h"
#include "util/errors.h"

namespace racelab::cli {

namespace alloccmd {

namespace {

using namespace racelab::alloc;

struct ReportArgs {
  std::vector<std::string> traces;
  std::vector<std::string> iterations;
  std::size_t window = 1000;
  std::int64_t settle = -1;  // -1: the warm phase racelab finds (alloc/warm_phase.h)
  int device = -1;
  bool table = false;
  std::string segments_at;
  std::string out;
  std::optional<results::MemoryExpect>
      expect;         // none: no check; else exit 1 where a trace is not so
  std::string junit;  // a JUnit file: one testcase per trace (and device)
  DeviceMemory dev;
};

Colour colour_of(const StabilityReport& r) {
  return r.stable ? Colour::kGreen : r.measured ? Colour::kRed : Colour::kYellow;
}

void print_report(const StabilityReport& r, bool table) {
  fmt::print("{}: {}\n", r.name, paint(r.verdict, colour_of(r)));
  fmt::print("  {} {} ({}); placement {}/{} same as recorded", r.rows.size(),
             r.iterations ? "iterations" : "windows", r.boundaries_source, r.replay.allocs_same,
             r.replay.allocs);
  if (r.recorded_rows)
    fmt::print("; matches the stats JSON at {}/{} iterations", r.recorded_matches, r.recorded_rows);
  fmt::print("\n  warm phase: {}\n", r.warm.description);
  for (const std::string& line : growth_lines(r)) fmt::print("  {}\n", line);
  if (!table) return;
  fmt::print("  {:>10} {:>10} {:>10} {:>8} {:>8} {:>12} {:>12} {:>7}\n", "window", "reserved",
             "allocated", "segments", "+device", "inact.split", "largest free", "frag");
  for (const Row& row : r.rows) {
    fmt::print("  {:>10} {:>10} {:>10} {:>8} {:>8} {:>12} {:>12} {:>6.1f}%\n", row.label,
               mib(row.at_end.reserved), mib(row.at_end.allocated), row.at_end.segments,
               row.device_allocs_in, mib(row.at_end.inactive_split_bytes),
               mib(row.at_end.largest_free), row.fragmentation * 100);
  }
}

void print_table(const std::vector<StabilityReport>& reports) {
  // Two spaces between columns, so that "14 -> 14" and "382 MiB -> 382 MiB" never run together.
  fmt::print("\n{:<24}  {:>12}  {:>14}  {:>22}  {:>13}  {:>7}\n", "trace", "stable", "segments",
             "reserved", "peak reserved", "retries");
  for (const StabilityReport& r : reports) {
    const Sample& f = r.rows.front().at_end;
    const Sample& l = r.rows.back().at_end;
    fmt::print("{:<24}  {:>12}  {:>14}  {:>22}  {:>13}  {:>7}\n", r.name,
               r.stable     ? "yes"
               : r.measured ? "no"
                            : "not measured",
               fmt::format("{} -> {}", f.segments, l.segments),
               fmt::format("{} -> {}", mib(f.reserved), mib(l.reserved)), mib(r.peak_reserved),
               l.retries);
  }
}

}  // namespace

void print_reports(const TraceReports& got, bool table) {
  clear_progress();
  for (const std::string& w : got.warnings) {
    if (!w.empty()) fmt::print("{}\n", paint(w, Colour::kYellow));
  }
  for (const StabilityReport& r : got.reports) print_report(r, table);
  if (got.reports.size() > 1) print_table(got.reports);
}

void print_written(const std::vector<std::string>& files) {
  fmt::print("wrote {}\n", fmt::join(files, ", "));
}

namespace {

int report_command(const ReportArgs& a) {
  run::AllocReportOptions o{.traces = a.traces,
                            .iterations = a.iterations,
                            .device = a.device,
                            .out = a.out,
                            .expect = a.expect,
                            .junit = a.junit,
                            .progress = replay_progress()};
  o.settings.window = a.window;
  if (a.settle >= 0) o.settings.settle = static_cast<std::size_t>(a.settle);
  if (!a.segments_at.empty()) o.settings.segments_at = a.segments_at;
  o.settings.dev = a.dev;
  const run::AllocReportResult got = run::alloc_report(
      o, {.on_reports = [&a](const TraceReports& r) { print_reports(r, a.table); },
          .on_written = print_written});
  if (!got.expect) return kExitOk;
  const std::string word = results::memory_expect_name(*got.expect);
  if (got.off.empty() && got.unmeasured.empty()) {
    fmt::print("expectation ({}) {}\n", word, paint("holds", Colour::kGreen));
    return kExitOk;
  }
  if (!got.off.empty())
    fmt::print("expectation ({}) {}: {}\n", word, paint("does not hold", Colour::kRed),
               fmt::join(got.off, ", "));
  // A CI job must not pass on a run that measured nothing: inconclusive, exit 1, as a search cut
  // short is (docs/allocator.md, Verdict).
  if (!got.unmeasured.empty())
    fmt::print("expectation ({}) {}: {} not measured (too few iterations after the warm phase)\n",
               word, paint("inconclusive", Colour::kYellow), fmt::join(got.unmeasured, ", "));
  return got.exit_code();
}

}  // namespace

void add_report(CLI::App* alloc, Runner& run) {
  auto pa = std::make_shared<ReportArgs>();
  auto* pc = alloc->add_subcommand("report",
                                   "Is memory stable? Per-iteration allocator state and a verdict");
  pc->add_option("traces", pa->traces, "one or more snapshots")->required();
  pc->add_option(
      "--iterations", pa->iterations,
      "stats JSON with iteration times, one per trace (default: stats_<name>.json beside it)");
  pc->add_option("--window", pa->window,
                 "allocations per window when no iteration boundaries are known")
      ->check(integer_check(1));
  pc->add_option("--settle", pa->settle,
                 "iterations allowed to allocate before the verdict counts growth (default: the "
                 "warm phase: each optimizer's first step and the first step with all drafters "
                 "running, from the capture; iteration 0 where the trace does not say)")
      ->check(integer_check(0));
  add_device_select(pc, pa->device);
  pc->add_flag("--table", pa->table, "print every iteration's row");
  pc->add_option(
      "--segments-at", pa->segments_at,
      "iteration (or window label) whose end state the HTML segment map shows (default: the last)");
  enum_option(pc, "--expect", pa->expect, results::memory_expect_table(),
              "stable | unstable: exit 1 unless every trace is so (a CI job's check)");
  pc->add_option("--junit", pa->junit, "write a JUnit testsuite here (needs --expect)");
  pc->add_option("--out", pa->out,
                 "write alloc-report.json, report.html and <name>.iterations.csv here");
  add_device_options(pc, pa->dev);
  pc->callback([&run, pa] { run = [pa] { return report_command(*pa); }; });
}

}  // namespace alloccmd

}  // namespace racelab::cli
