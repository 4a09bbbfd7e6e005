#include "report/suite_run.h"

#include <chrono>
#include <filesystem>

#include "report/html.h"
#include "report/report.h"
#include "util/document.h"
#include "util/files.h"

namespace racelab::report {

namespace {

bool stop_now(const SuiteOptions& o) { return o.interrupt != nullptr && o.interrupt->load(); }

}  // namespace

SuiteRun run_suite(const std::vector<model::Scenario>& suite, const SuiteOptions& o) {
  namespace fs = std::filesystem;
  const auto t0 = std::chrono::steady_clock::now();
  SuiteRun out;
  out.runs.reserve(suite.size());
  std::vector<nlohmann::json> summary;
  for (const model::Scenario& sc : suite) {
    if (stop_now(o)) break;
    const std::string dir = (fs::path(o.out_dir) / sc.name).string();
    if (sc.live) {
      // A live case runs once, on the first shard (its executions are not split).
      if (o.partition.shard != 0) continue;
      if (o.on_live_start) o.on_live_start(sc);
      model::LiveCaseRun lr = model::run_live_case(sc, o.racelab, dir);
      out.passed += lr.verdict == model::LiveVerdict::kPass;
      out.failed += lr.verdict == model::LiveVerdict::kFail;
      out.inconclusive += lr.verdict == model::LiveVerdict::kInconclusive;
      out.skipped += lr.verdict == model::LiveVerdict::kSkipped;
      if (o.on_live) o.on_live(lr);
      summary.push_back(live_summary_entry(lr));
      out.live_runs.push_back(std::move(lr));
      continue;
    }
    sched::ExploreOptions eo = model::explore_options(sc);
    eo.time_limit_s = o.time_limit;
    eo.partition = o.partition;
    eo.check_determinism = o.check_determinism;
    eo.interrupt = o.interrupt;
    if (o.progress)
      eo.progress =
          o.progress(out.runs.size(), suite.size(), sc, sched::strategy_proves(eo.strategy.kind));
    model::ScenarioRun run = model::run_scenario(sc, eo);
    nlohmann::json report = write_explore_outputs(run, dir);
    const model::Verdict v = run.verdict();
    out.passed += v == model::Verdict::kPass;
    out.failed += v == model::Verdict::kFail;
    out.inconclusive += v == model::Verdict::kInconclusive;
    if (o.on_scenario) o.on_scenario(run, report);
    summary.push_back(suite_summary_entry(run, report, dir));
    out.runs.push_back(std::move(run));
    out.reports.push_back(std::move(report));
  }
  out.interrupted = stop_now(o);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ensure_directory(o.out_dir);
  const nlohmann::json doc = suite_summary(summary, out.interrupted, out.seconds, o.partition);
  write_file_atomic(fs::path(o.out_dir) / "summary.json", document_text(doc));
  std::vector<HtmlScenario> pages;
  for (std::size_t k = 0; k < out.runs.size(); ++k) pages.push_back({&out.runs[k], out.reports[k]});
  write_file_atomic(fs::path(o.out_dir) / "report.html",
                    explore_html(pages, "racelab suite", out.seconds));
  if (!o.junit.empty()) write_file_atomic(o.junit, junit_xml(out.runs, out.seconds, out.live_runs));
  return out;
}

}  // namespace racelab::report
