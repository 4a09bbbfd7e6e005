#include "alloc/outputs.h"

#include <fmt/format.h>

#include "alloc/inputs.h"
#include "util/document.h"
#include "util/files.h"

namespace racelab::alloc {

namespace fs = std::filesystem;

void write_replay_outputs(const fs::path& dir, const Snapshot& snap, const std::string& trace,
                          const Config& config, const std::vector<std::size_t>& devices,
                          const std::vector<ReplayResult>& results) {
  ensure_directory(dir);
  std::vector<DeviceReplay> parts;
  for (std::size_t k = 0; k < devices.size(); ++k) parts.push_back({devices[k], &results[k]});
  write_snapshot_value(dir / "replay.pickle", *model_snapshot_value(snap, parts));
  nlohmann::ordered_json per_device = nlohmann::ordered_json::array();
  for (std::size_t k = 0; k < devices.size(); ++k) {
    const ReplayResult& r = results[k];
    per_device.push_back({{"device", devices[k]},
                          {"allocations", r.allocs},
                          {"allocations_same_placement", r.allocs_same},
                          {"real_segment_events", r.real_segment_events},
                          {"model_segment_events", r.model_segment_events},
                          {"segment_events_identical", r.segment_events_same},
                          {"empty_cache_inferred", r.empty_cache_at.size()},
                          {"memory_stats", memory_stats_json(r.stats)}});
  }
  nlohmann::ordered_json summary;
  summary["format"] = kAllocReplayFormat;
  summary["version"] = kAllocReplayVersion;
  summary["trace"] = trace;
  summary["config"] = config.describe();
  summary["devices"] = per_device;
  write_file_atomic(dir / "replay.json", document_text(summary));
}

std::vector<std::string> write_report_outputs(const fs::path& dir,
                                              const std::vector<StabilityReport>& reports) {
  ensure_directory(dir);
  std::vector<std::string> files = {(dir / "alloc-report.json").lexically_normal().string(),
                                    (dir / "report.html").lexically_normal().string()};
  nlohmann::ordered_json j;
  j["format"] = kAllocReportFormat;
  j["version"] = kAllocReportVersion;
  j["reports"] = nlohmann::ordered_json::array();
  for (const StabilityReport& r : reports) {
    j["reports"].push_back(report_json(r));
    write_file_atomic(dir / (r.name + ".iterations.csv"), rows_csv(r));
    files.push_back((dir / (r.name + ".iterations.csv")).lexically_normal().string());
  }
  write_file_atomic(dir / "alloc-report.json", document_text(j, 1));
  write_file_atomic(dir / "report.html", report_html(reports));
  return files;
}

nlohmann::ordered_json whatif_json(std::size_t device, const std::vector<WhatifLine>& lines) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const WhatifLine& l : lines) {
    j.push_back({{"config", l.name},
                 {"peak_reserved", l.peak_reserved},
                 {"final_reserved", l.final_reserved},
                 {"segments", l.segments},
                 {"device_allocs", l.device_allocs},
                 {"retries", l.retries},
                 {"ooms", l.ooms},
                 {"first_oom", l.first_oom}});
  }
  return {{"device", device}, {"settings", j}};
}

std::vector<std::string> write_whatif_outputs(
    const std::filesystem::path& dir, const std::string& trace,
    const std::vector<std::pair<std::size_t, WhatifRun>>& runs) {
  nlohmann::ordered_json devices = nlohmann::ordered_json::array();
  std::vector<std::string> pages;
  for (const auto& [device, w] : runs) {
    devices.push_back(whatif_json(device, w.lines));
    const std::string page =
        runs.size() > 1 ? fmt::format("whatif.device{}.html", device) : "whatif.html";
    write_file_atomic(dir / page, whatif_html(trace, w.lines, w.recorded));
    pages.push_back((dir / page).lexically_normal().string());
  }
  nlohmann::ordered_json j;
  j["format"] = kAllocWhatifFormat;
  j["version"] = kAllocWhatifVersion;
  j["devices"] = std::move(devices);
  write_file_atomic(dir / "whatif.json", document_text(j, 1));
  pages.insert(pages.begin(), (dir / "whatif.json").lexically_normal().string());
  return pages;
}

TraceReports report_capture(const std::string& trace, const std::filesystem::path& dir,
                            const ProgressFor& progress) {
  TraceReports got = analyse_traces({trace}, {}, -1, ReportSettings{}, progress);
  got.written = write_report_outputs(dir, got.reports);
  return got;
}

}  // namespace racelab::alloc
