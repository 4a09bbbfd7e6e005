// racelab alloc {replay,report,whatif,convert}: CUDA caching-allocator traces (memory_viz
// snapshots) replayed through the allocator model. docs/allocator.md.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>

#include "alloc/replay.h"
#include "alloc/report.h"
#include "alloc/snapshot.h"
#include "alloc/whatif.h"
#include "command.h"
#include "report/cli.h"
#include "util/errors.h"
#include "util/files.h"
#include "util/html.h"

namespace racelab::cli {

namespace {

namespace fs = std::filesystem;
using namespace racelab::alloc;

struct DeviceArgs {
  std::string device_memory;  // total device memory, e.g. "140GiB" or bytes
  double memory_fraction = 0;
};

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

void apply_device(Config& c, const DeviceArgs& d) {
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

void add_device_select(CLI::App* cmd, int& device) {
  cmd->add_option("--device", device,
                  "only this device's trace (default: every device with a trace)")
      ->check(integer_check(0, 1023));
}

void add_device_options(CLI::App* cmd, DeviceArgs& d) {
  cmd->add_option(
      "--device-memory", d.device_memory,
      "memory the allocator may use, e.g. 80GiB (default: the H200 the fixtures ran on, "
      "139.80 GiB less its 527 MiB CUDA context)");
  cmd->add_option("--memory-fraction", d.memory_fraction,
                  "torch.cuda.set_per_process_memory_fraction the run used (garbage collection "
                  "acts only with one set)");
}

// Which devices' traces to replay: every device with events, or the one --device names.
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
                    const std::vector<std::string>& configs, const DeviceArgs& dev) {
  Config c = config_from_snapshot(s.root->get("allocator_settings"), origin);
  if (!configs.empty()) {
    Config fresh;
    for (const auto& text : configs) fresh = parse_config(text, fresh);
    c = fresh;
  }
  apply_device(c, dev);
  return c;
}

std::string mib(std::uint64_t b) {
  return fmt::format("{:.0f} MiB", static_cast<double>(b) / kMiB);
}

// ---------------------------------------------------------------------------------------------

struct ReplayArgs {
  std::string trace;
  std::vector<std::string> config;
  bool compare = false;
  int device = -1;
  std::string out;
  DeviceArgs dev;
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
  nlohmann::ordered_json per_device = nlohmann::ordered_json::array();
  bool all_identical = true;
  for (std::size_t device : devices) {
    const auto& trace = snap.traces[device];
    ReplayOptions opt;
    opt.config = config;
    opt.device = static_cast<std::int64_t>(device);
    opt.real_addresses = true;
    opt.keep_trace = !a.out.empty();
    opt.progress = count_progress(fmt::format("replaying {} device {}", a.trace, device), "events");
    results.push_back(replay_trace(trace, opt));
    const ReplayResult& r = results.back();
    fmt::print("device {}: {} events\n", device, trace.size());
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
    per_device.push_back({{"device", device},
                          {"allocations", r.allocs},
                          {"allocations_same_placement", r.allocs_same},
                          {"real_segment_events", r.real_segment_events},
                          {"model_segment_events", r.model_segment_events},
                          {"segment_events_identical", r.segment_events_same},
                          {"empty_cache_inferred", r.empty_cache_at.size()},
                          {"memory_stats", memory_stats_json(st)}});
    if (!a.compare) continue;
    const std::string agreement = fmt::format(
        "allocations: {}/{} same placement; segment events: {}/{} identical", r.allocs_same,
        r.allocs, r.segment_events_same, std::max(r.real_segment_events, r.model_segment_events));
    fmt::print("{}{}\n", devices.size() > 1 ? fmt::format("device {}: ", device) : std::string(),
               paint(agreement, r.identical() ? Colour::kGreen : Colour::kRed));
    for (const auto& m : r.alloc_mismatches)
      fmt::print("  first differences: event {}: {}\n", m.event, m.text);
    for (const auto& m : r.segment_mismatches) fmt::print("  first differences: {}\n", m.text);
    if (r.real_ooms || r.model_ooms)
      fmt::print("  out of memory: real {}, model {}\n", r.real_ooms, r.model_ooms);
    all_identical = all_identical && r.identical() && r.real_ooms == 0;
  }
  if (!a.out.empty()) {
    ensure_directory(a.out);
    const fs::path dir(a.out);
    std::vector<DeviceReplay> parts;
    for (std::size_t k = 0; k < devices.size(); ++k) parts.push_back({devices[k], &results[k]});
    write_snapshot_value(dir / "replay.pickle", *model_snapshot_value(snap, parts));
    nlohmann::ordered_json summary;
    summary["trace"] = a.trace;
    summary["config"] = config.describe();
    summary["devices"] = per_device;
    write_file_atomic(dir / "replay.json", summary.dump(2) + "\n");
    fmt::print("wrote {} (open in pytorch.org/memory_viz) and {}\n",
               (dir / "replay.pickle").string(), (dir / "replay.json").string());
  }
  if (!a.compare) return kExitOk;
  return all_identical ? kExitOk : kExitFound;
}

// ---------------------------------------------------------------------------------------------

struct ReportArgs {
  std::vector<std::string> traces;
  std::vector<std::string> iterations;
  std::size_t window = 1000;
  std::size_t settle = 1;
  int device = -1;
  bool table = false;
  std::string segments_at;
  std::string out;
  std::string expect;  // "", stable, unstable: exit 1 where a trace is not so
  std::string junit;   // a JUnit file: one testcase per trace (and device)
  DeviceArgs dev;
};

// JUnit for `alloc report --expect`: one testcase per report, a failure where it is not as
// expected, the verdict and the numbers in system-out.
std::string alloc_junit(const std::vector<StabilityReport>& reports, const std::string& expect,
                        double seconds) {
  int failures = 0;
  for (const auto& r : reports) failures += r.stable != (expect == "stable");
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"racelab\" tests=\"{}\" failures=\"{}\" time=\"{:.3f}\">\n",
                     reports.size(), failures, seconds);
  out += fmt::format(
      "  <testsuite name=\"racelab.alloc\" tests=\"{}\" failures=\"{}\" errors=\"0\" "
      "skipped=\"0\" time=\"{:.3f}\">\n",
      reports.size(), failures, seconds);
  for (const auto& r : reports) {
    const std::string body = fmt::format("{}; {} {} ({}); peak reserved {}", r.verdict,
                                         r.rows.size(), r.iterations ? "iterations" : "windows",
                                         r.boundaries_source, mib(r.peak_reserved));
    out += fmt::format("    <testcase classname=\"racelab.alloc.{}\" name=\"{}\" time=\"0\">\n",
                       expect, html::escape(r.name));
    if (r.stable != (expect == "stable"))
      out += fmt::format("      <failure message=\"{}\" type=\"expectation\">{}</failure>\n",
                         html::escape(fmt::format("expected {}: {}", expect, r.verdict)),
                         html::escape(body));
    out += fmt::format("      <system-out>{}</system-out>\n    </testcase>\n", html::escape(body));
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

std::string stem_name(const std::string& path) {
  std::string s = fs::path(path).stem().string();
  if (s.rfind("snap_", 0) == 0) s = s.substr(5);
  return s;
}

int report_command(const ReportArgs& a) {
  if (!a.junit.empty() && a.expect.empty())
    throw InputError(
        "alloc report --junit: say what the job checks with --expect stable (or unstable)");
  const auto started = std::chrono::steady_clock::now();
  if (!a.iterations.empty() && a.iterations.size() != a.traces.size()) {
    throw InputError(
        fmt::format("--iterations: give one stats JSON per trace ({} traces, {} files)",
                    a.traces.size(), a.iterations.size()));
  }
  std::vector<StabilityReport> reports;
  std::vector<std::string> warnings;
  for (std::size_t t = 0; t < a.traces.size(); ++t) {
    const std::string& path = a.traces[t];
    report::expect_file(path, report::FileKind::kSnapshot, "alloc report TRACE...");
    const Snapshot snap = read_snapshot(path);
    const std::vector<std::size_t> devices = pick_devices(snap, a.device, path);
    std::vector<std::size_t> used_stats;  // the reports of this trace's devices that used stats
    fs::path stats_used;
    for (std::size_t device : devices) {
      const auto& trace = snap.traces[device];
      // Boundaries: the stats JSON given, or the one beside the trace (stats_<name>.json), or
      // annotations, or windows of allocations.
      Boundaries b;
      fs::path stats;
      if (!a.iterations.empty()) {
        stats = a.iterations[t];
      } else {
        const fs::path beside =
            fs::path(path).parent_path() / ("stats_" + stem_name(path) + ".json");
        if (fs::exists(beside)) stats = beside;
      }
      if (!stats.empty()) {
        report::expect_file(stats.string(), report::FileKind::kStats, "alloc report --iterations");
        b = boundaries_from_stats(trace, stats, path);
      } else if (auto ann = boundaries_from_annotations(trace, snap.annotations)) {
        b = *ann;
      } else {
        b = boundaries_by_window(trace, a.window);
      }
      ReplayOptions opt;
      opt.config = trace_config(snap, path, {}, a.dev);
      opt.device = static_cast<std::int64_t>(device);
      opt.progress = count_progress("replaying " + path, "events");
      const std::string name = devices.size() > 1
                                   ? fmt::format("{}.device{}", stem_name(path), device)
                                   : stem_name(path);
      reports.push_back(analyse(
          name, trace, b, opt, a.settle,
          a.segments_at.empty() ? std::nullopt : std::optional<std::string>(a.segments_at)));
      if (!stats.empty()) {
        used_stats.push_back(reports.size() - 1);
        stats_used = stats;
      }
    }
    if (!used_stats.empty()) {
      std::vector<const StabilityReport*> devs;
      for (std::size_t k : used_stats) devs.push_back(&reports[k]);
      for (auto& w : check_stats_agreement(devs, stats_used.string(), path))
        warnings.push_back(std::move(w));
    }
  }
  clear_progress();
  for (const std::string& w : warnings) {
    if (!w.empty()) fmt::print("{}\n", paint(w, Colour::kYellow));
  }

  for (const StabilityReport& r : reports) {
    fmt::print("{}: {}\n", r.name, paint(r.verdict, r.stable ? Colour::kGreen : Colour::kRed));
    fmt::print("  {} {} ({}); placement {}/{} same as recorded", r.rows.size(),
               r.iterations ? "iterations" : "windows", r.boundaries_source, r.replay.allocs_same,
               r.replay.allocs);
    if (r.recorded_rows)
      fmt::print("; matches the stats JSON at {}/{} iterations", r.recorded_matches,
                 r.recorded_rows);
    fmt::print("\n");
    if (a.table) {
      fmt::print("  {:>10} {:>10} {:>10} {:>8} {:>8} {:>12} {:>12} {:>7}\n", "window", "reserved",
                 "allocated", "segments", "+device", "inact.split", "largest free", "frag");
      for (const Row& row : r.rows) {
        fmt::print("  {:>10} {:>10} {:>10} {:>8} {:>8} {:>12} {:>12} {:>6.1f}%\n", row.label,
                   mib(row.at_end.reserved), mib(row.at_end.allocated), row.at_end.segments,
                   row.device_allocs_in, mib(row.at_end.inactive_split_bytes),
                   mib(row.at_end.largest_free), row.fragmentation * 100);
      }
    }
  }
  if (reports.size() > 1) {
    fmt::print("\n{:<24} {:>7} {:>14} {:>16} {:>13} {:>8}\n", "trace", "stable", "segments",
               "reserved", "peak reserved", "retries");
    for (const StabilityReport& r : reports) {
      const Sample& f = r.rows.front().at_end;
      const Sample& l = r.rows.back().at_end;
      fmt::print("{:<24} {:>7} {:>14} {:>16} {:>13} {:>8}\n", r.name, r.stable ? "yes" : "no",
                 fmt::format("{} -> {}", f.segments, l.segments),
                 fmt::format("{} -> {}", mib(f.reserved), mib(l.reserved)), mib(r.peak_reserved),
                 l.retries);
    }
  }
  if (!a.out.empty()) {
    ensure_directory(a.out);
    nlohmann::ordered_json j;
    j["reports"] = nlohmann::ordered_json::array();
    for (const StabilityReport& r : reports) {
      j["reports"].push_back(report_json(r));
      write_file_atomic(fs::path(a.out) / (r.name + ".iterations.csv"), rows_csv(r));
    }
    write_file_atomic(fs::path(a.out) / "alloc-report.json", j.dump(1) + "\n");
    write_file_atomic(fs::path(a.out) / "report.html", report_html(reports));
    fmt::print("wrote {} and {}\n", (fs::path(a.out) / "alloc-report.json").string(),
               (fs::path(a.out) / "report.html").string());
  }
  if (a.expect.empty()) return kExitOk;
  std::vector<std::string> off;
  for (const StabilityReport& r : reports)
    if (r.stable != (a.expect == "stable")) off.push_back(r.name);
  if (!a.junit.empty()) {
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    write_file_atomic(a.junit, alloc_junit(reports, a.expect, s));
    fmt::print("wrote {}\n", a.junit);
  }
  if (off.empty()) {
    fmt::print("expectation ({}) {}\n", a.expect, paint("holds", Colour::kGreen));
    return kExitOk;
  }
  fmt::print("expectation ({}) {}: {}\n", a.expect, paint("does not hold", Colour::kRed),
             fmt::join(off, ", "));
  return kExitFound;
}

// ---------------------------------------------------------------------------------------------

struct WhatifArgs {
  std::string trace;
  std::vector<std::string> configs;
  int device = -1;
  DeviceArgs dev;
  std::string out;
};

}  // namespace

int alloc_report(const std::string& trace, const std::string& out) {
  ReportArgs a;
  a.traces = {trace};
  a.out = out;
  return report_command(a);
}

namespace {

int whatif_command(const WhatifArgs& a) {
  report::expect_file(a.trace, report::FileKind::kSnapshot, "alloc whatif TRACE");
  const Snapshot snap = read_snapshot(a.trace);
  const std::vector<std::size_t> devices = pick_devices(snap, a.device, a.trace);
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  if (!a.out.empty()) ensure_directory(a.out);
  for (std::size_t device : devices) {
    const auto& trace = snap.traces[device];
    // The recorded settings first: they also say where the program called empty_cache.
    ReplayOptions base;
    base.config = trace_config(snap, a.trace, {}, a.dev);
    base.device = static_cast<std::int64_t>(device);
    base.progress = count_progress("replaying " + a.trace, "events");
    base.sample_after = whatif_sample_points(trace.size());
    const ReplayResult recorded = replay_trace(trace, base);
    std::vector<WhatifLine> lines;
    lines.push_back(whatif_line(
        "recorded: " + (base.config.conf.empty() ? std::string("(defaults)") : base.config.conf),
        recorded, base.config.expandable_segments));
    for (const std::string& text : a.configs) {
      ReplayOptions o;
      o.config = parse_config(text);
      apply_device(o.config, a.dev);
      o.device = static_cast<std::int64_t>(device);
      o.real_addresses = false;
      o.empty_cache_at = recorded.empty_cache_at;
      o.sample_after = base.sample_after;
      o.progress = count_progress("replaying " + a.trace + " under " + text, "events");
      lines.push_back(whatif_line(text.empty() ? std::string("(defaults)") : text,
                                  replay_trace(trace, o), o.config.expandable_segments));
    }
    fmt::print("trace: {} (device {}: {} allocations)\n", a.trace, device, recorded.allocs);
    fmt::print("{:<58} {:>13} {:>14} {:>9} {:>13} {:>8} {:>5}\n", "config", "peak reserved",
               "final reserved", "segments", "device allocs", "retries", "OOMs");
    nlohmann::ordered_json j = nlohmann::ordered_json::array();
    for (const WhatifLine& l : lines) {
      fmt::print("{:<58} {:>13} {:>14} {:>9} {:>13} {:>8} {:>5}\n", l.name, mib(l.peak_reserved),
                 mib(l.final_reserved), l.segments, l.device_allocs, l.retries, l.ooms);
      j.push_back({{"config", l.name},
                   {"peak_reserved", l.peak_reserved},
                   {"final_reserved", l.final_reserved},
                   {"segments", l.segments},
                   {"device_allocs", l.device_allocs},
                   {"retries", l.retries},
                   {"ooms", l.ooms},
                   {"first_oom", l.first_oom}});
    }
    for (const WhatifLine& l : lines) {
      if (!l.first_oom.empty()) fmt::print("{}: {}\n", l.name, l.first_oom);
    }
    all.push_back({{"device", device}, {"settings", j}});
    if (!a.out.empty()) {
      const std::string page =
          devices.size() > 1 ? fmt::format("whatif.device{}.html", device) : "whatif.html";
      write_file_atomic(fs::path(a.out) / page, whatif_html(a.trace, lines, base.config));
      fmt::print("wrote {}\n", (fs::path(a.out) / page).string());
    }
  }
  if (!a.out.empty()) write_file_atomic(fs::path(a.out) / "whatif.json", all.dump(1) + "\n");
  return kExitOk;
}

// ---------------------------------------------------------------------------------------------

int convert_command(const std::string& in, const std::string& out) {
  report::expect_file(in, report::FileKind::kSnapshot, "alloc convert IN");
  const Snapshot snap = read_snapshot(in);
  write_snapshot_value(out, *snap.root);
  fmt::print("wrote {} ({} device traces, {} segments)\n", out, snap.traces.size(),
             snap.segment_count);
  return kExitOk;
}

}  // namespace

void add_alloc(CLI::App& app, Runner& run) {
  auto* alloc = app.add_subcommand(
      "alloc", "CUDA caching-allocator traces: replay, report, what-if, convert");
  alloc->require_subcommand(1);

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
                 "windows allowed to allocate before the verdict counts growth")
      ->check(integer_check(0));
  add_device_select(pc, pa->device);
  pc->add_flag("--table", pa->table, "print every iteration's row");
  pc->add_option(
      "--segments-at", pa->segments_at,
      "iteration (or window label) whose end state the HTML segment map shows (default: the last)");
  pc->add_option("--expect", pa->expect,
                 "stable | unstable: exit 1 unless every trace is so (a CI job's check)")
      ->check(one_of({"stable", "unstable"}));
  pc->add_option("--junit", pa->junit, "write a JUnit testsuite here (needs --expect)");
  pc->add_option("--out", pa->out,
                 "write alloc-report.json, report.html and <name>.iterations.csv here");
  add_device_options(pc, pa->dev);
  pc->callback([&run, pa] { run = [pa] { return report_command(*pa); }; });

  auto wa = std::make_shared<WhatifArgs>();
  auto* wc = alloc->add_subcommand("whatif", "The same trace under other allocator settings");
  wc->add_option("trace", wa->trace, "snapshot")->required();
  wc->add_option("--config", wa->configs, "PYTORCH_CUDA_ALLOC_CONF settings (repeat)")->required();
  add_device_select(wc, wa->device);
  wc->add_option("--out", wa->out, "write whatif.json and whatif.html here");
  add_device_options(wc, wa->dev);
  wc->callback([&run, wa] { run = [wa] { return whatif_command(*wa); }; });

  auto ca = std::make_shared<std::pair<std::string, std::string>>();
  auto* cc =
      alloc->add_subcommand("convert", "Snapshot pickle <-> JSON (by the output's extension)");
  cc->add_option("input", ca->first, "snapshot (.pickle or .json)")->required();
  cc->add_option("output", ca->second, "output: .json for JSON, anything else for a pickle")
      ->required();
  cc->callback([&run, ca] { run = [ca] { return convert_command(ca->first, ca->second); }; });
}

}  // namespace racelab::cli
