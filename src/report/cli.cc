#include "report/cli.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "util/document.h"
#include "util/errors.h"

namespace racelab::report {

namespace fs = std::filesystem;

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0u : 1u)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string closest(std::string_view word, const std::vector<std::string>& candidates) {
  const std::size_t limit = std::clamp<std::size_t>(word.size() / 3, 1, 3);
  std::string best;
  std::size_t best_d = limit + 1;
  for (const std::string& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

std::string word_list(const std::vector<std::string>& words, const char* last) {
  std::string out;
  for (std::size_t k = 0; k < words.size(); ++k) {
    if (k > 0) out += k + 1 == words.size() ? fmt::format(" {} ", last) : ", ";
    out += words[k];
  }
  return out;
}

std::string check_integer(const std::string& text, std::int64_t lo, std::int64_t hi) {
  const std::string want = hi == INT64_MAX ? (lo == 1   ? std::string("a positive integer")
                                              : lo == 0 ? std::string("a non-negative integer")
                                                        : fmt::format("an integer >= {}", lo))
                                           : fmt::format("an integer in {}..{}", lo, hi);
  const std::string bad = fmt::format("expected {}, got {}", want, text.empty() ? "''" : text);
  if (text.empty()) return bad;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (end != text.c_str() + text.size() || errno == ERANGE) return bad;
  if (v < lo || v > hi) return bad;
  return "";
}

std::string check_number(const std::string& text, double lo) {
  const std::string bad =
      fmt::format("expected a number >= {}, got {}", lo, text.empty() ? "''" : text);
  if (text.empty()) return bad;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(v) || v < lo) return bad;
  return "";
}

namespace {

bool has(const std::string& text, std::string_view needle) {
  return text.find(needle) != std::string::npos;
}

FileKind from_json_keys(const nlohmann::json& j) {
  if (!j.is_object()) return FileKind::kUnknown;
  const std::string format =
      j.contains("format") && j["format"].is_string() ? j["format"].get<std::string>() : "";
  if (format == "racelab-schedule") return FileKind::kSchedule;
  if (format == "racelab-interpose") return FileKind::kInterposeTable;
  if (format == kSummaryFormat) return FileKind::kSuiteSummary;
  if (format == kReportFormat) return FileKind::kExploreReport;
  if (format == kLiveReportFormat) return FileKind::kLiveReport;
  if (format == kAllocReportFormat) return FileKind::kAllocReport;
  if (j.contains("scenarios") && j.contains("passed")) return FileKind::kSuiteSummary;
  if (j.contains("scenario_hash") && j.contains("findings")) return FileKind::kExploreReport;
  if (j.contains("reports") && j["reports"].is_array()) return FileKind::kAllocReport;
  if (j.contains("rows") && j["rows"].is_array() && !j["rows"].empty() &&
      j["rows"][0].is_object() && j["rows"][0].contains("t_start_us"))
    return FileKind::kStats;
  if (j.contains("device_traces") || j.contains("segments")) return FileKind::kSnapshot;
  return FileKind::kUnknown;
}

// The value of a leading "format" key ({"format": "racelab-report", ...}), or empty.
std::string leading_format(const std::string& head) {
  std::size_t at = 0;
  auto skip_space = [&] {
    while (at < head.size() && std::isspace(static_cast<unsigned char>(head[at]))) ++at;
  };
  auto take = [&](std::string_view word) {
    skip_space();
    if (head.compare(at, word.size(), word) != 0) return false;
    at += word.size();
    return true;
  };
  if (!take("{") || !take("\"format\"") || !take(":") || !take("\"")) return "";
  const std::size_t end = head.find_first_of("\"\\", at);
  if (end == std::string::npos || head[end] != '"') return "";
  return head.substr(at, end - at);
}

// Key markers in the head of a large JSON file (nlohmann writes keys in sorted order, so the
// distinctive ones are early; report.json and summary.json put their "format" first).
FileKind from_json_text(const std::string& head) {
  const std::string format = leading_format(head);
  if (format == kSummaryFormat) return FileKind::kSuiteSummary;
  if (format == kReportFormat) return FileKind::kExploreReport;
  if (format == kLiveReportFormat) return FileKind::kLiveReport;
  if (format == kAllocReportFormat) return FileKind::kAllocReport;
  if (has(head, "\"racelab-schedule\"")) return FileKind::kSchedule;
  if (has(head, "\"racelab-interpose\"")) return FileKind::kInterposeTable;
  if (has(head, "\"scenarios\"") && has(head, "\"passed\"")) return FileKind::kSuiteSummary;
  if (has(head, "\"scenario_hash\"")) return FileKind::kExploreReport;
  if (has(head, "\"t_start_us\"")) return FileKind::kStats;
  if (has(head, "\"device_traces\"") || has(head, "\"segments\"")) return FileKind::kSnapshot;
  if (has(head, "\"reports\"")) return FileKind::kAllocReport;
  return FileKind::kUnknown;
}

}  // namespace

FileKind identify_file(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return FileKind::kMissing;
  if (fs::is_directory(path, ec)) return FileKind::kDirectory;
  std::ifstream in(path, std::ios::binary);
  if (!in) return FileKind::kUnknown;
  constexpr std::size_t kHead = 1 << 20;
  std::string head(kHead, '\0');
  in.read(head.data(), static_cast<std::streamsize>(kHead));
  head.resize(static_cast<std::size_t>(in.gcount()));
  const bool whole = in.peek() == std::char_traits<char>::eof();
  if (head.empty()) return FileKind::kUnknown;
  if (static_cast<unsigned char>(head[0]) == 0x80) return FileKind::kSnapshot;  // pickle
  std::size_t start = head.find_first_not_of(" \t\r\n");
  if (start == std::string::npos) return FileKind::kUnknown;
  if (head.compare(start, 5, "<?xml") == 0 || head.compare(start, 11, "<testsuites") == 0) {
    return has(head, "<testsuite") ? FileKind::kJunit : FileKind::kUnknown;
  }
  if (head[start] == '<') {
    return has(head, "<html") || has(head, "<!DOCTYPE html") ? FileKind::kHtml : FileKind::kUnknown;
  }
  if (head[start] == '{' || head[start] == '[') {
    if (whole) {
      try {
        return from_json_keys(nlohmann::json::parse(head));
      } catch (const nlohmann::json::exception&) {
        return FileKind::kUnknown;
      }
    }
    return from_json_text(head);
  }
  // TOML: a scenario names itself and has its tables.
  if (has(head, "name") && (has(head, "[pipeline]") || has(head, "[explore]") ||
                            has(head, "[expect]") || has(head, "[warmup]")))
    return FileKind::kScenario;
  if (fs::path(path).extension() == ".toml") return FileKind::kScenario;
  return FileKind::kUnknown;
}

std::string file_kind_text(FileKind k) {
  switch (k) {
    case FileKind::kUnknown:
      return "a file of unknown format";
    case FileKind::kMissing:
      return "missing";
    case FileKind::kDirectory:
      return "a directory";
    case FileKind::kSchedule:
      return "a schedule (racelab-schedule JSON)";
    case FileKind::kScenario:
      return "a scenario (TOML)";
    case FileKind::kSuiteSummary:
      return "a suite summary (the summary.json racelab suite --out writes)";
    case FileKind::kExploreReport:
      return "an exploration report (the report.json racelab explore writes)";
    case FileKind::kLiveReport:
      return "a live search report (the report.json racelab live torch or python writes)";
    case FileKind::kAllocReport:
      return "an allocator report (the alloc-report.json racelab alloc report writes)";
    case FileKind::kStats:
      return "a per-iteration stats JSON (the stats_<name>.json beside a trace)";
    case FileKind::kSnapshot:
      return "a memory_viz snapshot (CUDA allocator trace)";
    case FileKind::kInterposeTable:
      return "an interposition table (racelab-interpose JSON)";
    case FileKind::kJunit:
      return "JUnit XML";
    case FileKind::kHtml:
      return "an HTML report";
  }
  return "?";
}

std::string expected_text(FileKind k) {
  switch (k) {
    case FileKind::kSchedule:
      return "a schedule file (JSON with \"format\": \"racelab-schedule\", as explore and suite "
             "write under DIR/schedules/<scenario>.<kind>.json and live torch and python as "
             "OUT/schedule-<kind>.json)";
    case FileKind::kScenario:
      return "a scenario file (TOML, docs/scenarios.md; e.g. "
             "scenarios/deadlock/lazy-2-drafters.toml)";
    case FileKind::kSnapshot:
      return "a memory_viz snapshot (.pickle from torch.cuda.memory._dump_snapshot, or its JSON "
             "from racelab alloc convert)";
    case FileKind::kStats:
      return "a stats JSON ({\"rows\": [{\"iter\", \"t_start_us\", \"t_end_us\", \"reserved\", "
             "\"allocated\", \"segments\", \"device_allocs\"}, ...]}, as racelab live alloc "
             "writes beside the trace)";
    default:
      return file_kind_text(k);
  }
}

void expect_file(const std::string& path, FileKind expected, const std::string& usage) {
  const FileKind k = identify_file(path);
  if (k == expected || k == FileKind::kUnknown || k == FileKind::kMissing) return;
  throw InputError(fmt::format("{}: this is {}, not {}; {} takes {}", path, file_kind_text(k),
                               file_kind_text(expected), usage, expected_text(expected)));
}

}  // namespace racelab::report
