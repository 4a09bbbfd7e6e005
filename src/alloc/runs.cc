#include "alloc/runs.h"

#include <fmt/format.h>

#include <algorithm>

namespace racelab::alloc {

namespace fs = std::filesystem;

namespace {

std::function<void(std::size_t, std::size_t)> progress_of(const ProgressFor& progress,
                                                          const std::string& what) {
  if (!progress) return nullptr;
  return progress(what);
}

}  // namespace

ReplayResult replay_device(const Snapshot& snap, std::size_t device, const Config& config,
                           bool keep_trace, const std::string& origin,
                           const ProgressFor& progress) {
  ReplayOptions opt;
  opt.config = config;
  opt.device = static_cast<std::int64_t>(device);
  opt.real_addresses = true;
  opt.keep_trace = keep_trace;
  opt.progress = progress_of(progress, fmt::format("replaying {} device {}", origin, device));
  return replay_trace(snap.traces[device], opt);
}

std::string agreement_text(const ReplayResult& r) {
  return fmt::format("allocations: {}/{} same placement; segment events: {}/{} identical",
                     r.allocs_same, r.allocs, r.segment_events_same,
                     std::max(r.real_segment_events, r.model_segment_events));
}

TraceReports analyse_trace(const Snapshot& snap, const std::string& path,
                           const std::vector<std::size_t>& devices, const fs::path& stats,
                           const ReportSettings& settings, const ProgressFor& progress) {
  TraceReports out;
  for (std::size_t device : devices) {
    const auto& trace = snap.traces[device];
    // Boundaries: the stats JSON, or annotations, or windows of allocations.
    Boundaries b;
    if (!stats.empty()) {
      b = boundaries_from_stats(trace, stats, path);
    } else if (auto ann = boundaries_from_annotations(trace, snap.annotations)) {
      b = *ann;
    } else {
      b = boundaries_by_window(trace, settings.window);
    }
    ReplayOptions opt;
    opt.config = trace_config(snap, path, {}, settings.dev);
    opt.device = static_cast<std::int64_t>(device);
    opt.progress = progress_of(progress, "replaying " + path);
    const std::string name = devices.size() > 1
                                 ? fmt::format("{}.device{}", trace_name(path), device)
                                 : trace_name(path);
    out.reports.push_back(
        analyse(name, trace, b, opt, settings.settle, settings.segments_at, snap.stacks));
  }
  if (!stats.empty()) {
    // Whether the stats JSON belongs to the trace, judged over all of its devices.
    std::vector<const StabilityReport*> devs;
    for (const StabilityReport& r : out.reports) devs.push_back(&r);
    out.warnings = check_stats_agreement(devs, stats.string(), path);
  }
  return out;
}

TraceReports analyse_traces(const std::vector<std::string>& traces,
                            const std::vector<std::string>& iterations, int device,
                            const ReportSettings& settings, const ProgressFor& progress,
                            const std::function<void(const std::string&, bool)>& check) {
  TraceReports out;
  for (std::size_t t = 0; t < traces.size(); ++t) {
    const std::string& path = traces[t];
    if (check) check(path, false);
    const Snapshot snap = read_snapshot(path);
    const std::vector<std::size_t> devices = pick_devices(snap, device, path);
    const fs::path stats = stats_for(
        path, iterations.empty() ? std::nullopt : std::optional<std::string>(iterations[t]));
    if (!stats.empty() && check) check(stats.string(), true);
    TraceReports got = analyse_trace(snap, path, devices, stats, settings, progress);
    for (auto& r : got.reports) out.reports.push_back(std::move(r));
    for (auto& w : got.warnings) out.warnings.push_back(std::move(w));
  }
  return out;
}

WhatifRun whatif_device(const Snapshot& snap, const std::string& origin, std::size_t device,
                        const std::vector<std::string>& configs, const DeviceMemory& dev,
                        const ProgressFor& progress) {
  const auto& trace = snap.traces[device];
  // The recorded settings first: they also say where the program called empty_cache.
  ReplayOptions base;
  base.config = trace_config(snap, origin, {}, dev);
  base.device = static_cast<std::int64_t>(device);
  base.progress = progress_of(progress, "replaying " + origin);
  base.sample_after = whatif_sample_points(trace.size());
  const ReplayResult recorded = replay_trace(trace, base);
  WhatifRun run;
  run.recorded = base.config;
  run.allocations = recorded.allocs;
  run.lines.push_back(whatif_line(
      "recorded: " + (base.config.conf.empty() ? std::string("(defaults)") : base.config.conf),
      recorded, base.config.expandable_segments));
  for (const std::string& text : configs) {
    ReplayOptions o;
    o.config = parse_config(text);
    apply_device(o.config, dev);
    o.device = static_cast<std::int64_t>(device);
    o.real_addresses = false;
    o.empty_cache_at = recorded.empty_cache_at;
    o.sample_after = base.sample_after;
    o.progress = progress_of(progress, "replaying " + origin + " under " + text);
    run.lines.push_back(whatif_line(text.empty() ? std::string("(defaults)") : text,
                                    replay_trace(trace, o), o.config.expandable_segments));
  }
  return run;
}

}  // namespace racelab::alloc
