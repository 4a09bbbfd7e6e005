// racelab merge DIR...: the --out directories of the shards of one exploration or one suite,
// combined into the report.json, schedules, summary.json, JUnit XML and report.html that one
// unsharded run would have written (timings apart). docs/scale.md.
#include "report/merge.h"

#include <fmt/format.h>

#include <filesystem>

#include "command.h"
#include "racelab/version.h"
#include "report/html.h"
#include "report/report.h"
#include "util/errors.h"
#include "util/files.h"

namespace racelab::cli {

namespace {

namespace fs = std::filesystem;

struct MergeArgs {
  std::vector<std::string> dirs;
  std::string out = "racelab-out/merged";
  std::string junit;
};

int merge_command(const MergeArgs& a) {
  const bool suites = fs::exists(fs::path(a.dirs.front()) / "summary.json");
  for (const auto& d : a.dirs) {
    if (!fs::is_directory(d)) throw InputError(d + ": not a directory");
    if (fs::exists(fs::path(d) / "summary.json") != suites) {
      throw InputError(fmt::format("{}: mixes suite and explore outputs ({} {} summary.json)", d, d,
                                   suites ? "has no" : "has a"));
    }
  }
  std::vector<model::ScenarioRun> runs;
  std::vector<nlohmann::json> reports;
  std::vector<nlohmann::json> entries;
  std::vector<nlohmann::json> live_entries;  // live cases ran whole on shard 0: kept as judged
  if (suites) {
    // The scenarios of the first shard's summary, in its order; every shard must have them all.
    const nlohmann::json summary = report::read_suite_summaries(a.dirs);
    runs.reserve(summary["scenarios"].size());
    for (const auto& entry : summary["scenarios"]) {
      if (entry.value("live", false)) {
        live_entries.push_back(entry);
        continue;
      }
      const auto name = entry["scenario"].get<std::string>();
      std::vector<std::string> dirs;
      for (const auto& d : a.dirs) dirs.push_back((fs::path(d) / name).string());
      runs.push_back(report::merge_exploration(dirs));
    }
  } else {
    runs.push_back(report::merge_exploration(a.dirs));
  }
  double seconds = 0;
  for (const auto& run : runs) {
    const std::string dir = suites ? (fs::path(a.out) / run.scenario.name).string() : a.out;
    reports.push_back(report::write_explore_outputs(run, dir));
    entries.push_back(report::suite_summary_entry(run, reports.back(), dir));
    seconds += run.result.seconds;
    fmt::print("{} {:<34} {} finding kind(s); {}\n", verdict_word(run), run.scenario.name,
               run.result.found.size(), run.coverage_brief());
    if (run.verdict() != model::Verdict::kPass) fmt::print("     {}\n", run.verdict_reason());
  }
  for (const auto& e : live_entries) {
    fmt::print("{} {:<34} (live, from shard 0) {}\n", e.value("verdict", "?"),
               e.value("scenario", "?"), e.value("verdict_reason", ""));
    entries.push_back(e);
  }
  std::vector<report::HtmlScenario> pages;
  for (std::size_t k = 0; k < runs.size(); ++k) pages.push_back({&runs[k], reports[k]});
  ensure_directory(a.out);
  if (suites) {
    write_file_atomic(
        fs::path(a.out) / "summary.json",
        document_text(report::suite_summary(entries, false, seconds, sched::Partition{})));
  }
  write_file_atomic(
      fs::path(a.out) / "report.html",
      report::explore_html(pages, suites ? "racelab suite (merged)" : "racelab explore (merged)",
                           seconds));
  if (!a.junit.empty()) write_file_atomic(a.junit, report::junit_xml(runs, seconds));
  fmt::print("merged {} shard(s) into {}\n", a.dirs.size(), a.out);
  if (suites) {
    bool all_pass = true;
    for (const auto& run : runs) all_pass = all_pass && run.verdict() == model::Verdict::kPass;
    for (const auto& e : live_entries) {
      const std::string v = e.value("verdict", "");
      all_pass = all_pass && (v == "pass" || v == "skipped");
    }
    return all_pass ? kExitOk : kExitFound;
  }
  return model::explore_exit_code(runs.front());
}

}  // namespace

void add_merge(CLI::App& app, Runner& run) {
  auto args = std::make_shared<MergeArgs>();
  auto* cmd =
      app.add_subcommand("merge", "Combine the --out directories of --shard runs into one result");
  cmd->add_option("dirs", args->dirs, "every shard's --out directory (explore or suite)")
      ->required();
  cmd->add_option("--out", args->out,
                  "where to write the merged result (default: racelab-out/merged)");
  cmd->add_option("--junit", args->junit, "also write JUnit XML here");
  cmd->callback([&run, args] { run = [args] { return merge_command(*args); }; });
}

}  // namespace racelab::cli
