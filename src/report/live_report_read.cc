// The children's report.json read back (live_report_read.h).
#include "report/live_report_read.h"

#include <nlohmann/json.hpp>

#include "util/document.h"
#include "util/files.h"

namespace racelab::report {

namespace {

using json = nlohmann::json;

LiveReportFinding finding_of(const json& f) {
  LiveReportFinding out;
  out.kind = f.value("kind", "");
  out.message = f.value("message", "");
  out.execution = f.value("execution", std::uint64_t{0});
  for (const json& fr : f.value("stack", json::array()))
    out.stack.push_back(sched::StackFrame{.file = fr.value("file", ""),
                                          .line = fr.value("line", 0),
                                          .function = fr.value("function", ""),
                                          .user = fr.value("user", false)});
  return out;
}

}  // namespace

std::optional<LiveReportSummary> read_live_report(const std::filesystem::path& path) {
  json j;
  try {
    j = json::parse(read_file(path.string()));
  } catch (const std::exception&) {
    return std::nullopt;  // none, or cut off: the child died first, and its log says why
  }
  check_format(j, path.string(), kLiveReportFormat, kLiveReportVersion,
               "the report.json of racelab live python --out");
  LiveReportSummary s;
  if (!j.is_object()) return s;
  s.executions = j.value("executions", std::uint64_t{0});
  if (j.contains("stopped_by") && j["stopped_by"].is_string())
    s.stopped_by = sched::parse_stop_reason(j["stopped_by"].get<std::string>());
  s.exhausted = j.value("exhausted", false);
  s.proves = j.value("proves", false);
  s.crashed = j.value("crashed", false);
  if (j.contains("kinds_seen") && j["kinds_seen"].is_object())
    for (const auto& [kind, n] : j["kinds_seen"].items())
      s.kinds_seen[kind] = n.get<std::uint64_t>();
  for (const json& f : j.value("findings", json::array())) s.findings.push_back(finding_of(f));
  s.schedule = j.value("schedule", "");
  if (j.contains("versions") && j["versions"].is_object())
    s.outside_verified = j["versions"].value("outside", "");
  s.proof_covers = j.value("proof_covers", "");
  if (j.contains("interleavings") && j["interleavings"].is_object() &&
      j["interleavings"].contains("classes_seen"))
    s.classes_seen = j["interleavings"]["classes_seen"].get<std::uint64_t>();
  return s;
}

}  // namespace racelab::report
