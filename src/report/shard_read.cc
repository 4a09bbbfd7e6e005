// A shard's report.json and summary.json read back for racelab merge (shard_read.h).
#include "report/shard_read.h"

#include <fmt/format.h>

#include <filesystem>

#include "util/document.h"
#include "util/files.h"

namespace racelab::report {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// A field merge checks: "DIR/report.json: missing 'KEY'" or "... 'KEY' has the wrong type".
template <class T>
ShardValue<T> checked(const json& obj, const char* key, const std::string& dir) {
  if (!obj.contains(key))
    return ShardValue<T>::refused(fmt::format("{}/report.json: missing '{}'", dir, key));
  try {
    return ShardValue<T>(obj[key].get<T>());
  } catch (const json::exception&) {
    return ShardValue<T>::refused(fmt::format("{}/report.json: '{}' has the wrong type", dir, key));
  }
}

// A field our writer always writes: nlohmann's words where it is missing or of the wrong type.
template <class T>
ShardValue<T> written(const json& obj, const char* key) {
  try {
    return ShardValue<T>(obj.at(key).get<T>());
  } catch (const json::exception& e) {
    return ShardValue<T>::refused(e.what(), true);
  }
}

// `obj.value(key, fallback)`, or nlohmann's words where it has the wrong type.
template <class T>
ShardValue<T> written_or(const json& obj, const char* key, T fallback) {
  try {
    return ShardValue<T>(obj.value(key, fallback));
  } catch (const json::exception& e) {
    return ShardValue<T>::refused(e.what(), true);
  }
}

// The elements a range-for over `j` visits (an array's, an object's values, nothing for null, a
// primitive itself).
std::vector<const json*> elements(const json& j) {
  std::vector<const json*> out;
  for (const json& e : j) out.push_back(&e);
  return out;
}

json parse_document(const fs::path& path, const std::string& where, const char* format, int version,
                    const std::string& what) {
  json doc;
  try {
    doc = json::parse(read_file(path));
  } catch (const json::parse_error& e) {
    throw InputError(fmt::format("{}: byte {}: invalid JSON", where, e.byte));
  }
  check_format(doc, path.string(), format, version, what);
  return doc;
}

ShardFinding finding_of(const json& f) {
  ShardFinding out;
  out.execution = written<std::uint64_t>(f, "execution");
  if (f.contains("subtree")) out.subtree = written<std::uint64_t>(f, "subtree");
  out.kind = written<std::string>(f, "kind");
  out.preemptions = written<std::uint64_t>(f, "preemptions");
  out.preemptions_before_shrink = written<std::uint64_t>(f, "preemptions_before_shrink");
  return out;
}

ShardSubtree subtree_of(const json& t, const std::string& dir) {
  return ShardSubtree{.index = written<std::uint64_t>(t, "index"),
                      .executions = written<std::int64_t>(t, "executions"),
                      .redundant = checked<std::uint64_t>(t, "redundant", dir),
                      .complete = written<bool>(t, "complete"),
                      .steps = written<std::uint64_t>(t, "steps")};
}

ShardInterleavings interleavings_of(const json& cov) {
  ShardInterleavings out;
  out.saturated = written_or(cov, "saturated", false);
  for (const auto& [hex, n] : cov["fingerprints"].items()) {
    try {
      out.fingerprints.emplace_back(
          std::make_pair(std::stoull(hex, nullptr, 16), n.get<std::uint64_t>()));
    } catch (const std::exception& e) {
      out.fingerprints.push_back(
          ShardValue<std::pair<std::uint64_t, std::uint64_t>>::refused(e.what(), true));
    }
  }
  return out;
}

}  // namespace

ShardReport read_shard_report(const std::string& dir) {
  const fs::path path = fs::path(dir) / "report.json";
  if (!fs::exists(path))
    throw InputError(fmt::format("{}: no report.json (not an explore --out directory)", dir));
  const json r = parse_document(path, path.string(), kReportFormat, kReportVersion,
                                "the report.json of racelab explore or suite --out");
  ShardReport out;
  out.dir = dir;
  for (const char* key : {"scenario", "scenario_hash", "strategy_description", "seed", "iterations",
                          "strategy_params"}) {
    out.identity.push_back({key, r.contains(key) ? std::optional<json>(r[key]) : std::nullopt});
  }
  if (!r.is_object()) return out;  // not a shard: merge says so before it reads anything else
  out.is_shard = r.contains("partition");
  if (out.is_shard) {
    out.shards = checked<std::uint64_t>(r["partition"], "shards", dir);
    out.shard = checked<std::uint64_t>(r["partition"], "shard", dir);
  }
  out.scenario_path = checked<std::string>(r, "scenario_path", dir);
  out.scenario_hash = written<std::string>(r, "scenario_hash");
  if (r.contains("torch") && r["torch"].is_string()) out.torch = r["torch"].get<std::string>();
  const auto strategy = checked<std::string>(r, "strategy", dir);
  if (!strategy.ok()) {
    out.strategy = ShardValue<sched::StrategyKind>::refused(strategy.error());
  } else {
    try {
      out.strategy = ShardValue<sched::StrategyKind>(sched::parse_strategy(strategy.get()));
    } catch (const InputError& e) {
      out.strategy = ShardValue<sched::StrategyKind>::refused(e.what());
    }
  }
  out.strategy_description = written<std::string>(r, "strategy_description");
  out.seed = checked<std::uint64_t>(r, "seed", dir);
  const json params = r.contains("strategy_params") ? r["strategy_params"] : json();
  out.depth = checked<int>(params, "depth", dir);
  out.max_preemptions = checked<int>(params, "max_preemptions", dir);
  out.iterations = checked<std::uint64_t>(r, "iterations", dir);

  const json split = r.value("dfs_split", json::object());
  out.subtrees = checked<std::uint64_t>(split, "subtrees", dir);
  if (out.subtrees.ok()) {
    out.subtrees_text = split["subtrees"].dump();
    if (split.contains("ran")) {
      std::vector<ShardSubtree> ran;
      for (const json* t : elements(split["ran"])) ran.push_back(subtree_of(*t, dir));
      out.ran = ShardValue<std::vector<ShardSubtree>>(std::move(ran));
    } else {
      out.ran = ShardValue<std::vector<ShardSubtree>>::refused(
          "[json.exception.out_of_range.403] key 'ran' not found", true);
    }
  }

  out.executions = checked<std::uint64_t>(r, "executions", dir);
  out.steps = checked<std::uint64_t>(r, "steps", dir);
  out.seconds = checked<double>(r, "seconds", dir);
  out.stopped_by = checked<std::string>(r, "stopped_by", dir);
  if (out.stopped_by.ok()) out.stop = sched::parse_stop_reason(out.stopped_by.get());

  const json fs_ = r.value("findings", json::array());
  if (fs_.is_array() || fs_.empty()) {
    std::vector<ShardFinding> findings;
    for (const json& f : fs_) findings.push_back(finding_of(f));
    out.findings = ShardValue<std::vector<ShardFinding>>(std::move(findings));
  } else {
    try {
      (void)fs_[0];
    } catch (const json::exception& e) {
      out.findings = ShardValue<std::vector<ShardFinding>>::refused(e.what(), true);
    }
  }

  const json cov = r.value("interleavings", json::object());
  if (cov.contains("fingerprints")) out.interleavings = interleavings_of(cov);
  out.determinism = r.contains("determinism");
  const json vt = r.value("virtual_time", json::object());
  out.warmup_seconds = written_or(vt, "warmup_s", 0.0);
  out.makespan_seconds = written_or(vt, "makespan_s", 0.0);
  return out;
}

ShardSummary read_shard_summary(const std::string& dir) {
  const fs::path path = fs::path(dir) / "summary.json";
  json s = parse_document(path, dir + "/summary.json", kSummaryFormat, kSummaryVersion,
                          "the summary.json of racelab suite --out");
  ShardSummary out;
  out.dir = dir;
  if (s.contains("partition")) {
    try {
      out.shard_zero = ShardValue<bool>(s["partition"].value("shard", 1) == 0);
    } catch (const json::exception& e) {
      out.shard_zero = ShardValue<bool>::refused(e.what(), true);
    }
  } else {
    out.shard_zero = ShardValue<bool>(false);
  }
  std::vector<ShardSummaryEntry> entries;
  const json scenarios = s.is_object() ? s["scenarios"] : json();
  for (const json* e : elements(scenarios)) {
    ShardSummaryEntry entry;
    entry.live = written_or(*e, "live", false);
    entry.scenario = written<std::string>(*e, "scenario");
    entry.entry = *e;
    entries.push_back(std::move(entry));
  }
  out.scenarios = std::move(entries);
  return out;
}

}  // namespace racelab::report
