// racelab alloc report and alloc diff (alloc.h).
#include "run/alloc.h"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>

#include "alloc/outputs.h"
#include "report/cli.h"
#include "report/junit.h"
#include "sched/verdict.h"
#include "util/errors.h"
#include "util/files.h"

namespace racelab::run {

namespace fs = std::filesystem;

int AllocReportResult::exit_code() const {
  return off.empty() && unmeasured.empty() ? kExitOk : kExitFound;
}

AllocReportResult alloc_report(const AllocReportOptions& o, const AllocReportPrinter& print) {
  if (!o.junit.empty() && !o.expect)
    throw InputError(
        "alloc report --junit: say what the job checks with --expect stable (or unstable)");
  const auto started = std::chrono::steady_clock::now();
  if (!o.iterations.empty() && o.iterations.size() != o.traces.size()) {
    throw InputError(
        fmt::format("--iterations: give one stats JSON per trace ({} traces, {} files)",
                    o.traces.size(), o.iterations.size()));
  }
  AllocReportResult r;
  r.expect = o.expect;
  r.got = alloc::analyse_traces(
      o.traces, o.iterations, o.device, o.settings, o.progress,
      [](const std::string& path, bool stats) {
        if (stats)
          report::expect_file(path, report::FileKind::kStats, "alloc report --iterations");
        else
          report::expect_file(path, report::FileKind::kSnapshot, "alloc report TRACE...");
      });
  print.on_reports(r.got);
  const std::vector<alloc::StabilityReport>& reports = r.got.reports;
  if (!o.out.empty()) print.on_written(alloc::write_report_outputs(o.out, reports));
  if (!o.expect) return r;
  // Each trace judged by the one rule (results::judge): not as expected fails, too few iterations
  // after the warm phase to tell is inconclusive.
  for (const alloc::StabilityReport& t : reports) {
    const results::Verdict v =
        results::judge({.memory = *o.expect}, {},
                       results::MemoryFacts{.measured = t.measured, .stable = t.stable}, {});
    if (v.why == results::Why::kNotAsExpected) r.off.push_back(t.name);
    if (v.why == results::Why::kMemoryNotMeasured) r.unmeasured.push_back(t.name);
  }
  if (!o.junit.empty()) {
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    write_file_atomic(o.junit, report::alloc_junit_xml(reports, *o.expect, s));
    print.on_written({o.junit});
  }
  return r;
}

namespace {

// The one report of `path` (one device: o.device picks it where the trace has several).
alloc::StabilityReport report_of(const alloc::Snapshot& snap, const std::string& path,
                                 const AllocDiffOptions& o, const std::optional<std::string>& stats,
                                 const alloc::ReportSettings& settings,
                                 const AllocDiffPrinter& print) {
  const std::vector<std::size_t> devices = alloc::pick_devices(snap, o.device, path);
  if (devices.size() > 1)
    throw InputError(
        fmt::format("{}: {} devices have traces; alloc diff compares one: pass --device N", path,
                    devices.size()));
  alloc::TraceReports got = alloc::analyse_trace(snap, path, devices, alloc::stats_for(path, stats),
                                                 settings, o.progress);
  print.on_warnings(got.warnings);
  return std::move(got.reports.front());
}

}  // namespace

AllocDiffResult alloc_diff(const AllocDiffOptions& o, const AllocDiffPrinter& print) {
  const bool iterations = !o.from.empty() || !o.to.empty();
  if (iterations && (o.from.empty() || o.to.empty()))
    throw InputError("alloc diff: --from and --to go together (two iterations of one trace)");
  if (iterations && o.traces.size() != 1)
    throw InputError("alloc diff --from I --to J: give one trace (two iterations of it)");
  if (!iterations && o.traces.size() != 2)
    throw InputError(
        "alloc diff: give two traces (A B), or one with --from I --to J (two of its iterations)");
  if (o.iterations.size() > o.traces.size())
    throw InputError("--iterations: at most one stats JSON per trace");
  alloc::ReportSettings settings = o.settings;
  auto stats_of = [&](std::size_t k) -> std::optional<std::string> {
    if (k < o.iterations.size()) return o.iterations[k];
    return std::nullopt;
  };
  alloc::DiffSide sa, sb;
  for (const std::string& t : o.traces)
    report::expect_file(t, report::FileKind::kSnapshot, "alloc diff TRACE");
  for (const std::string& s : o.iterations)
    report::expect_file(s, report::FileKind::kStats, "alloc diff --iterations");
  if (iterations) {
    const std::string& path = o.traces.front();
    const alloc::Snapshot snap = alloc::read_snapshot(path);
    settings.segments_at = o.from;
    sa = alloc::iteration_side(report_of(snap, path, o, stats_of(0), settings, print), snap.stacks,
                               o.from);
    settings.segments_at = o.to;
    sb = alloc::iteration_side(report_of(snap, path, o, stats_of(0), settings, print), snap.stacks,
                               o.to);
  } else {
    const alloc::Snapshot snap_a = alloc::read_snapshot(o.traces[0]);
    sa = alloc::run_side(report_of(snap_a, o.traces[0], o, stats_of(0), settings, print),
                         snap_a.stacks);
    const alloc::Snapshot snap_b = alloc::read_snapshot(o.traces[1]);
    sb = alloc::run_side(report_of(snap_b, o.traces[1], o, stats_of(1), settings, print),
                         snap_b.stacks);
  }
  if (sa.name == sb.name) {  // two runs of one script: the same trace name
    sa.name = "A " + sa.name;
    sb.name = "B " + sb.name;
  }
  AllocDiffResult r{.diff = alloc::diff_sides(sa, sb)};
  print.on_diff(r.diff);
  if (!o.out.empty()) {
    ensure_directory(o.out);
    const fs::path file = fs::path(o.out) / "alloc-diff.json";
    write_file_atomic(file, alloc::diff_json(r.diff).dump(1) + "\n");
    r.written = file.string();
  }
  return r;
}

}  // namespace racelab::run
