#include "suite_print.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "command.h"
#include "report/live_report.h"
#include "report/report.h"

namespace racelab::cli {

void print_suite_scenario(const results::ScenarioRun& run, const report::ExploreOutput& written) {
  std::string found;
  for (const auto& f : run.result.found) found += (found.empty() ? "" : ", ") + f.finding.kind;
  fmt::print("{} {:<34} found [{}]; {}, {:.2f} s\n", verdict_word(run), run.scenario.name, found,
             run.coverage_brief(), run.result.seconds);
  for (const auto& d : run.result.determinism_failures)
    fmt::print("     not deterministic: {}\n", d);
  const results::Outcome v = run.verdict();
  // Inconclusive and pending: the reason says it all.
  if (v == results::Outcome::kInconclusive || v == results::Outcome::kPending)
    fmt::print("     {}\n", run.verdict_reason());
  if (v != results::Outcome::kFail) return;
  if (!run.missing.empty())
    fmt::print("     expected but not found: {}\n", fmt::join(run.missing, ", "));
  for (const auto& k : run.unexpected) {
    const auto* f = run.result.find(k);
    fmt::print("     must not occur but found: {}: {}\n", k, report::message_text(f->finding));
    for (const report::FoundOutput& w : written.found) {
      if (w.kind == k && !w.replay.empty()) fmt::print("     replay: {}\n", w.replay);
    }
  }
}

void print_suite_live_case(const results::LiveCaseRun& lr) {
  std::string found;
  for (const auto& [k, n] : lr.kinds) found += (found.empty() ? "" : ", ") + k;
  const std::string executions =
      lr.proven && lr.verdict == results::Outcome::kPass
          ? fmt::format("proven ({}, exhaustive, {} executions)", lr.strategy, lr.executions)
          : fmt::format("{} executions", lr.executions);
  fmt::print("{} {:<34} (live) found [{}]; {}, {:.2f} s\n", results::outcome_word(lr.verdict),
             lr.scenario.name, found, executions, lr.seconds);
  if (!lr.memory.empty()) fmt::print("     {:<34} memory: {}\n", "", lr.memory_summary);
  if (!lr.reason.empty()) fmt::print("     {}\n", lr.reason);
  if (!lr.outside_verified.empty())
    fmt::print("     {}\n", paint("warning: " + lr.outside_verified, Colour::kYellow));
  // A clean live verdict says what it does not cover (its report.json: not_checked), and a
  // proof what it covers.
  if (lr.verdict == results::Outcome::kPass && lr.scenario.must.empty())
    fmt::print("     {}\n", report::kPythonNotChecked);
  if (lr.verdict == results::Outcome::kPass && lr.proven)
    fmt::print("     {}\n", report::live_proof_covers(sched::kLivePythonSubject));
}

void print_suite_end(const results::SuiteTotals& totals, const std::string& out_dir,
                     const std::string& junit) {
  fmt::print("{}\n", run::wrote_line(out_dir, junit));
  fmt::print("{}\n", paint(totals.line(), totals.ok() ? Colour::kGreen : Colour::kRed));
}

}  // namespace racelab::cli
