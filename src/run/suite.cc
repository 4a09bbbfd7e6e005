#include "run/suite.h"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>

#include "report/html.h"
#include "report/report.h"
#include "run/explore.h"
#include "util/document.h"
#include "util/files.h"

namespace racelab::run {

namespace {

bool stop_now(const SuiteOptions& o) { return o.interrupt != nullptr && o.interrupt->load(); }

}  // namespace

std::string wrote_line(const std::string& out_dir, const std::string& junit) {
  namespace fs = std::filesystem;
  const fs::path dir(out_dir);
  return fmt::format("wrote {}, {} and one report.json per scenario{}{}",
                     (dir / "summary.json").lexically_normal().string(),
                     (dir / "report.html").lexically_normal().string(), junit.empty() ? "" : ", ",
                     junit.empty() ? "" : fs::path(junit).lexically_normal().string());
}

SuiteRun run_suite(const std::vector<model::Scenario>& suite, const SuiteOptions& o) {
  namespace fs = std::filesystem;
  const auto t0 = std::chrono::steady_clock::now();
  SuiteRun out;
  SuiteTotals& totals = out.totals;
  if (o.partition.shards > 1)
    totals.shard = fmt::format("shard {}/{}", o.partition.shard, o.partition.shards);
  out.runs.reserve(suite.size());
  std::vector<nlohmann::json> summary;
  for (const model::Scenario& sc : suite) {
    if (stop_now(o)) break;
    const std::string dir = (fs::path(o.out_dir) / sc.name).string();
    if (sc.live) {
      // A live case runs once, on the first shard (its executions are not split).
      if (o.partition.shard != 0) {
        ++totals.elsewhere;
        out.live_elsewhere.push_back(sc.name);
        if (o.on_live_elsewhere) o.on_live_elsewhere(sc);
        continue;
      }
      if (o.on_live_start) o.on_live_start(sc);
      results::LiveCaseRun lr = run::run_live_case(sc, o.racelab, dir, o.live_python);
      totals.add(lr.verdict);
      if (o.on_live) o.on_live(lr);
      summary.push_back(report::live_summary_entry(lr));
      out.live_runs.push_back(std::move(lr));
      continue;
    }
    sched::ExploreOptions eo = run::explore_options(sc);
    eo.time_limit_s = o.time_limit;
    eo.partition = o.partition;
    eo.check_determinism = o.check_determinism;
    eo.interrupt = o.interrupt;
    if (o.progress)
      eo.progress =
          o.progress(out.runs.size(), suite.size(), sc, sched::strategy_proves(eo.strategy.kind));
    results::ScenarioRun run = run::run_scenario(sc, eo);
    report::ExploreOutput written = report::write_explore_outputs(run, dir);
    totals.add(run.verdict());
    if (o.on_scenario) o.on_scenario(run, written);
    summary.push_back(report::suite_summary_entry(run, written, dir));
    out.runs.push_back(std::move(run));
    out.found.push_back(std::move(written.found));
  }
  totals.interrupted = stop_now(o);
  totals.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ensure_directory(o.out_dir);
  const nlohmann::json doc =
      report::suite_summary(summary, totals.interrupted, totals.seconds, o.partition);
  write_file_atomic(fs::path(o.out_dir) / "summary.json", document_text(doc));
  std::vector<report::HtmlScenario> pages;
  for (std::size_t k = 0; k < out.runs.size(); ++k) pages.push_back({&out.runs[k], out.found[k]});
  write_file_atomic(
      fs::path(o.out_dir) / "report.html",
      report::suite_html(
          {.title = totals.shard.empty() ? "racelab suite" : "racelab suite · " + totals.shard,
           .scenarios = pages,
           .live = &out.live_runs,
           .live_elsewhere = out.live_elsewhere,
           .totals = totals}));
  if (!o.junit.empty())
    write_file_atomic(o.junit,
                      report::junit_xml(out.runs, totals.seconds, out.live_runs, totals.shard));
  return out;
}

}  // namespace racelab::run
