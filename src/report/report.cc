#include "report/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "model/profile.h"
#include "racelab/version.h"
#include "report/coverage_json.h"
#include "report/schedule_file.h"
#include "util/errors.h"
#include "util/files.h"
#include "util/hash.h"
#include "util/html.h"

namespace racelab::report {

using nlohmann::json;
namespace fs = std::filesystem;

sched::Schedule finding_schedule(const results::ScenarioRun& run, const sched::FoundKind& found) {
  const sched::ScheduleSource source{
      .subject_name = run.scenario.name,
      .subject_hash = run.scenario.hash,
      // Absolute, so that a replay finds it from any directory (docs/schedules.md).
      .subject_path = absolute_path(run.scenario.path),
      .strategy_name = sched::strategy_name(run.options.strategy.kind),
      .strategy_description = run.result.strategy,
      .seed = run.options.strategy.seed,
      .parameters = {.depth = run.options.strategy.depth,
                     .max_preemptions = run.options.strategy.max_preemptions,
                     .iterations = run.options.iterations,
                     .shrunk = run.options.shrink}};
  return sched::make_schedule(source, found.execution, &found.finding, found.preemptions,
                              sched::replay_steps(*found.result.exec));
}

std::string message_text(const std::string& kind, const std::string& message) {
  const std::string prefix = kind + ": ";
  if (message.rfind(prefix, 0) == 0) return message.substr(prefix.size());
  return message;
}

std::string message_text(const sched::Finding& f) { return message_text(f.kind, f.message); }

std::vector<const sched::Finding*> ordered(const std::vector<sched::Finding>& findings) {
  std::vector<const sched::Finding*> out;
  for (const auto& f : findings) out.push_back(&f);
  std::stable_sort(out.begin(), out.end(), [](const sched::Finding* a, const sched::Finding* b) {
    return sched::kinds::before(a->kind, b->kind);
  });
  return out;
}

nlohmann::ordered_json finding_json(const sched::Finding& f, const nlohmann::ordered_json& where) {
  nlohmann::ordered_json j = {{"kind", f.kind}, {"message", f.message}};
  for (const auto& [key, value] : where.items()) j[key] = value;
  j["details"] = f.details;
  j["cycle"] = f.cycle;
  // A Python exception's traceback, outermost first; every frame says whether it is the user's.
  if (!f.stack.empty()) {
    j["stack"] = nlohmann::ordered_json::array();
    for (const auto& fr : f.stack)
      j["stack"].push_back(
          {{"file", fr.file}, {"line", fr.line}, {"function", fr.function}, {"user", fr.user}});
  }
  return j;
}

double round_seconds(double s) { return std::round(s * 1e6) / 1e6; }

ExploreOutput write_explore_outputs(const results::ScenarioRun& run, const std::string& dir) {
  const model::Scenario& sc = run.scenario;
  ExploreOutput out;
  json findings = json::array();
  for (const sched::FoundKind& f : run.result.found) {
    // A json, not an ordered_json: report.json's keys are in alphabetical order (document_text).
    json item =
        finding_json(f.finding, {{"execution", f.execution},
                                 {"preemptions", f.preemptions},
                                 {"preemptions_before_shrink", f.original_preemptions},
                                 {"steps", f.result.exec->steps().size()},
                                 {"virtual_time_s", round_seconds(f.result.exec->makespan())}});
    if (f.subtree) item["subtree"] = *f.subtree;  // DFS shard: execution counts within it
    if (!dir.empty()) {
      ensure_directory(schedules_dir(dir));
      const std::string path =
          schedule_path(dir, {ScheduleName::Layout::kScenario, sc.name, f.finding.kind}).string();
      write_file_atomic(path, schedule_to_json(finding_schedule(run, f)));
      item["schedule"] = path;
      item["replay"] = replay_command(path);
      out.found.push_back(
          {.kind = f.finding.kind, .schedule = path, .replay = replay_command(path)});
    } else {
      item["schedule"] = nullptr;
      item["replay"] = nullptr;
      out.found.push_back({.kind = f.finding.kind});
    }
    findings.push_back(std::move(item));
  }
  json report = {{"format", kReportFormat},
                 {"version", kReportVersion},
                 {"racelab_version", kVersion},
                 {"scenario", sc.name},
                 {"scenario_path", sc.path},
                 {"scenario_hash", sc.hash},
                 {"torch", sc.profile},
                 {"torch_profile", sc.live ? "" : model::torch_profile(sc.profile).name},
                 {"strategy", sched::strategy_name(run.options.strategy.kind)},
                 {"strategy_description", run.result.strategy},
                 {"seed", run.options.strategy.seed},
                 {"strategy_params",
                  {{"depth", run.options.strategy.depth},
                   {"max_preemptions", run.options.strategy.max_preemptions}}},
                 {"iterations", run.options.iterations},
                 {"steps", run.result.steps},
                 {"coverage", run.coverage()},
                 {"verdict", results::outcome_name(run.verdict())},
                 {"verdict_reason", run.verdict_reason()},
                 {"findings", findings},
                 {"expectations",
                  {{"must", sc.must},
                   {"must_not", sc.must_not},
                   {"hold", run.holds()},
                   {"missing", run.missing},
                   {"unexpected", run.unexpected}}},
                 {"virtual_time",
                  {{"warmup_s", round_seconds(run.warmup_seconds)},
                   {"makespan_s", round_seconds(run.makespan_seconds)}}}};
  const nlohmann::ordered_json explored =
      explored_json(run.result, run.proves(), Seconds::kRounded, run.result.coverage_counted);
  for (const auto& [key, value] : explored.items()) report[key] = value;
  // A shard covered its part: `stopped_by` says how its part ended (merge reads it), and the
  // search as a whole is exhausted only when merge says so.
  if (run.shard()) report["exhausted"] = false;
  // A shard: every class with its count (sorted), so that racelab merge counts exactly.
  if (report.contains("interleavings") && run.options.partition.shards > 1) {
    std::map<std::uint64_t, std::uint64_t> sorted(run.result.coverage.counts().begin(),
                                                  run.result.coverage.counts().end());
    json counts = json::object();
    for (const auto& [fp, n] : sorted) counts[hex64(fp)] = n;
    report["interleavings"]["fingerprints"] = std::move(counts);
  }
  if (run.options.check_determinism) {
    report["determinism"] = {{"checked", run.result.determinism_checked},
                             {"failures", run.result.determinism_failures}};
  }
  const sched::Partition& part = run.options.partition;
  if (part.shards > 1) {
    // What `racelab merge` needs to put this shard's results in the single-worker order.
    report["partition"] = {{"shard", part.shard}, {"shards", part.shards}};
    if (const auto splitter = sched::make_splitter(run.options.strategy)) {
      json ran = json::array();
      for (const auto& t : run.result.subtrees) {
        ran.push_back({{"index", t.index},
                       {"executions", t.executions},
                       {"steps", t.steps},
                       {"complete", t.complete}});
        if (splitter->counts_classes()) ran.back()["redundant"] = t.redundant;
      }
      report["dfs_split"] = {
          {"depth", run.result.split_depth}, {"subtrees", run.result.subtree_count}, {"ran", ran}};
    }
  }
  if (!dir.empty()) {
    ensure_directory(dir);
    write_file_atomic(fs::path(dir) / "report.json", document_text(report));
  }
  if (run.result.coverage_counted) {
    const sched::CoverageSummary c = run.result.coverage.summary();
    out.classes_seen = c.classes;
    if (has_estimates(c, !run.proves())) out.unseen_probability = rounded_unseen_probability(c);
  }
  out.report = std::move(report);
  return out;
}

json suite_summary_entry(const results::ScenarioRun& run, const ExploreOutput& written,
                         const std::string& dir) {
  json kinds = json::array();
  for (const FoundOutput& f : written.found) kinds.push_back(f.kind);
  return {{"scenario", run.scenario.name},
          {"path", run.scenario.path},
          {"verdict", results::outcome_name(run.verdict())},
          {"verdict_reason", run.verdict_reason()},
          {"hold", run.holds()},
          {"found", written.found.size()},
          {"kinds", kinds},
          {"missing", run.missing},
          {"unexpected", run.unexpected},
          {"executions", run.result.executions},
          {"exhausted", run.exhaustive()},
          {"coverage", run.coverage()},
          {"classes_seen", written.classes_seen ? json(*written.classes_seen) : json(nullptr)},
          {"unseen_probability",
           written.unseen_probability ? json(*written.unseen_probability) : json(nullptr)},
          {"seconds", round_seconds(run.result.seconds)},
          {"report", dir.empty() ? json(nullptr) : json(dir + "/report.json")}};
}

json live_summary_entry(const results::LiveCaseRun& run) {
  json kinds = json::object();
  for (const auto& [k, n] : run.kinds) kinds[k] = n;
  return {{"scenario", run.scenario.name},
          {"path", run.scenario.path},
          {"live", true},
          {"verdict", results::outcome_name(run.verdict)},
          {"verdict_reason", run.reason},
          {"kinds_seen", kinds},
          {"missing", run.missing},
          {"unexpected", run.unexpected},
          {"memory", run.memory.empty() ? json(nullptr) : json(run.memory)},
          {"memory_summary", run.memory_summary},
          {"versions_outside",
           run.outside_verified.empty() ? json(nullptr) : json(run.outside_verified)},
          {"executions", run.executions},
          {"strategy", run.strategy},
          {"proven", run.proven},
          {"exit_code", run.exit_code},
          {"command", run.command()},
          {"seconds", round_seconds(run.seconds)},
          {"report", run.argv.empty() ? json(nullptr) : json(run.out_dir + "/report.json")}};
}

results::LiveCaseRun live_case_from_summary(const json& e) {
  results::LiveCaseRun run;
  const std::string path = e.value("path", std::string());
  std::error_code ec;
  if (!path.empty() && fs::exists(path, ec)) {
    try {
      run.scenario = model::load_scenario(path);
    } catch (const InputError&) {
      run.scenario = {};
    }
  }
  run.scenario.name = e.value("scenario", std::string());
  run.scenario.path = path;
  const std::string v = e.value("verdict", std::string());
  run.verdict = results::outcome_from_name(v).value_or(results::Outcome::kFail);
  run.reason = e.value("verdict_reason", std::string());
  if (e.contains("kinds_seen") && e["kinds_seen"].is_object()) {
    for (const auto& [k, n] : e["kinds_seen"].items()) run.kinds[k] = n.get<std::uint64_t>();
  }
  run.executions = e.value("executions", std::uint64_t{0});
  run.strategy = e.value("strategy", std::string());
  run.proven = e.value("proven", false);
  run.outside_verified = e.value("versions_outside", json(nullptr)).is_string()
                             ? e["versions_outside"].get<std::string>()
                             : std::string();
  run.exit_code = e.value("exit_code", 0);
  run.seconds = e.value("seconds", 0.0);
  run.recorded_command = e.value("command", std::string());
  if (e.contains("report") && e["report"].is_string()) {
    run.out_dir = fs::path(e["report"].get<std::string>()).parent_path().string();
  }
  if (e.contains("missing")) run.missing = e["missing"].get<std::vector<std::string>>();
  if (e.contains("unexpected")) run.unexpected = e["unexpected"].get<std::vector<std::string>>();
  if (e.contains("memory") && e["memory"].is_string()) run.memory = e["memory"].get<std::string>();
  run.memory_summary = e.value("memory_summary", std::string());
  return run;
}

json suite_summary(const std::vector<json>& entries, bool interrupted, double seconds,
                   const sched::Partition& partition) {
  int passed = 0, failed = 0, inconclusive = 0, skipped = 0, pending = 0;
  for (const json& e : entries) {
    const std::string v = e.value("verdict", std::string());
    passed += v == "pass";
    failed += v == "fail";
    inconclusive += v == "inconclusive";
    skipped += v == "skipped";
    pending += v == "pending";
  }
  json doc = {{"format", kSummaryFormat},
              {"version", kSummaryVersion},
              {"racelab_version", kVersion},
              {"scenarios", entries},
              {"passed", passed},
              {"failed", failed},
              {"inconclusive", inconclusive},
              {"skipped", skipped},
              {"interrupted", interrupted},
              {"seconds", round_seconds(seconds)}};
  if (partition.shards > 1) {
    // A shard: what it could not settle alone waits for racelab merge.
    doc["partition"] = {{"shard", partition.shard}, {"shards", partition.shards}};
    doc["pending"] = pending;
  }
  return doc;
}

}  // namespace racelab::report
