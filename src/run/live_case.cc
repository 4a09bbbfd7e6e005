#include "run/live_case.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "report/live_report_read.h"
#include "run/check.h"
#include "sched/kinds.h"
#include "sched/strategies/strategies.h"
#include "util/errors.h"
#include "util/files.h"
#include "util/spawn.h"
#include "util/text.h"

namespace racelab::run {

namespace fs = std::filesystem;

namespace {

std::string relative_to(const fs::path& dir, const std::string& p) {
  return fs::path(p).is_absolute() ? p : (dir / p).lexically_normal().string();
}

// The case's python_path, relative to the scenario's directory, as a PYTHONPATH.
std::string python_path_of(const LiveCase& c, const fs::path& dir) {
  std::string out;
  for (const auto& p : c.python_path) out += (out.empty() ? "" : ":") + relative_to(dir, p);
  return out;
}

}  // namespace

namespace {

// One `racelab live python` run of the case with `seed`, into `out`: its argv, exit code, seconds
// and report (none when it wrote none).
struct Attempt {
  std::vector<std::string> argv;
  int exit_code = 0;
  double seconds = 0;
  std::optional<report::LiveReportSummary> report;
  std::string log;
};

Attempt run_once(const Scenario& s, const std::string& racelab, const std::string& out,
                 std::uint64_t seed, const LivePython& python) {
  const LiveCase& c = *s.live;
  const fs::path dir = fs::absolute(s.path).parent_path();
  Attempt at;
  LivePythonChild child{
      .racelab = racelab,
      .interpose = c.interpose,
      .strategy = c.strategy,
      .max_preemptions = c.max_preemptions,
      .seed = seed,
      .executions = c.executions,
      .hang_timeout = c.hang_timeout,
      .expect = results::live_expect_name(s.must.empty() ? results::LiveExpect::kClean
                                                         : results::LiveExpect::kDeadlock),
      .out = out,
      .script = relative_to(dir, c.script),
      .args = c.args};
  for (const auto& d : c.dicts) child.flags.push_back("--dict=" + d);
  for (const auto& l : c.locks) child.flags.push_back("--lock=" + l);
  for (const auto& p : c.points) child.flags.push_back("--point=" + p);
  for (const auto& b : c.blocking) child.flags.push_back("--blocking=" + b);
  for (auto& f : python.flags(true)) child.flags.push_back(std::move(f));
  at.argv = live_python_argv(child);
  const std::string python_path = python_path_of(c, dir);
  ensure_directory(out);
  at.log = (fs::path(out) / "live.log").string();
  std::error_code ec;
  fs::remove(fs::path(out) / "report.json", ec);
  const auto t0 = std::chrono::steady_clock::now();
  at.exit_code = spawn_and_wait(at.argv, python_path, at.log);
  at.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  at.report = report::read_live_report(fs::path(out) / "report.json");
  return at;
}

}  // namespace

std::vector<std::string> live_python_argv(const LivePythonChild& c) {
  std::vector<std::string> v = {c.racelab, "live", "python"};
  auto flag = [&v](const char* name, std::string value) {
    v.emplace_back(name);
    v.push_back(std::move(value));
  };
  if (c.uncontrolled) v.emplace_back("--uncontrolled");
  if (!c.interpose.empty()) flag("--interpose", c.interpose);
  if (!c.alloc.empty()) flag("--alloc", c.alloc);
  if (c.strategy) flag("--strategy", sched::strategy_name(*c.strategy));
  if (c.max_preemptions) flag("--max-preemptions", std::to_string(*c.max_preemptions));
  if (c.seed) flag("--seed", std::to_string(*c.seed));
  if (c.executions) flag("--executions", std::to_string(*c.executions));
  if (c.jobs) flag("--jobs", std::to_string(*c.jobs));
  if (c.hang_timeout) flag("--hang-timeout", fmt::format("{}", *c.hang_timeout));
  if (c.time_limit) flag("--time-limit", fmt::format("{}", *c.time_limit));
  if (!c.expect.empty()) flag("--expect", c.expect);
  if (!c.out.empty()) flag("--out", c.out);
  v.insert(v.end(), c.flags.begin(), c.flags.end());
  v.push_back(c.script);
  if (!c.args.empty()) {
    v.emplace_back("--");
    v.insert(v.end(), c.args.begin(), c.args.end());
  }
  return v;
}

LiveCaseRun run_live_case(const Scenario& s, const std::string& racelab, const std::string& out_dir,
                          const LivePython& python) {
  const LiveCase& c = *s.live;
  const fs::path dir = fs::absolute(s.path).parent_path();
  LiveCaseRun run;
  run.scenario = s;
  run.out_dir = out_dir;
  if (c.requires_cuda && !fs::exists("/dev/nvidiactl")) {
    const results::Verdict v =
        results::skipped("requires CUDA, and this machine has no NVIDIA device (/dev/nvidiactl)");
    run.verdict = v.outcome;
    run.reason = v.reason;
    return run;
  }
  // A search stops at its first deadlock (its threads stay stuck; the process must end): while a
  // `must` kind is still missing and a search stopped early, search again with the next seed
  // (into OUT/seed-N), pooling the kinds, up to kAttempts searches.
  constexpr int kAttempts = 5;
  bool proves = false;
  sched::StopReason stop = sched::StopReason::kBudget;  // the last search's
  for (int k = 0; k < kAttempts; ++k) {
    const std::uint64_t seed = c.seed + static_cast<std::uint64_t>(k);
    const std::string out =
        k == 0 ? out_dir : (fs::path(out_dir) / fmt::format("seed-{}", seed)).string();
    Attempt at = run_once(s, racelab, out, seed, python);
    if (k == 0) run.argv = at.argv;
    run.exit_code = at.exit_code;
    run.seconds += at.seconds;
    if (!at.report) {
      const results::Verdict v = results::judge(
          {},
          {.error = fmt::format("racelab live python exited {} without a report: {} (see {})",
                                at.exit_code, last_line(at.log), at.log)},
          std::nullopt, results::live_case_wording());
      run.verdict = v.outcome;
      run.reason = v.reason;
      return run;
    }
    const std::uint64_t executions = at.report->executions;
    run.executions += executions;
    stop = at.report->stopped_by.value_or(sched::StopReason::kBudget);
    proves = at.report->proves;
    run.outside_verified = at.report->outside_verified;
    for (const auto& [kind, n] : at.report->kinds_seen) run.kinds[kind] += n;
    for (const report::LiveReportFinding& f : at.report->findings)
      if (!f.kind.empty() && !run.kinds.count(f.kind)) run.kinds[f.kind] = 1;
    if (at.exit_code == 2 || at.exit_code == 3) break;
    const bool missing = std::any_of(s.must.begin(), s.must.end(),
                                     [&](const std::string& m) { return !run.kinds.count(m); });
    // Another seed only changes a seeded (sampling) search: dfs ignores the seed.
    if (!missing || executions >= c.executions || !sched::strategy_info(c.strategy).seeded) break;
  }
  const std::optional<results::MemoryExpect>& memory_expect = c.alloc;
  std::optional<results::MemoryFacts> memory;
  if (memory_expect && run.exit_code != 2 && run.exit_code != 3) {
    const MemoryVerdict m = capture_memory(racelab, relative_to(dir, c.script), c.args, c.interpose,
                                           python, python_path_of(c, dir), c.alloc_time_limit,
                                           c.alloc_settle, (fs::path(out_dir) / "memory").string());
    run.memory = memory_state_name(m.state);
    run.memory_summary = memory_summary(m);
    run.seconds += m.seconds;
    memory = memory_facts(m);
  }
  run.strategy = sched::strategy_name(c.strategy);
  run.proven = proves && stop == sched::StopReason::kExhausted;
  std::vector<std::string> found;
  for (const auto& [kind, executions] : run.kinds) found.push_back(kind);
  const std::string log = (fs::path(out_dir) / "live.log").string();
  results::SearchFacts facts{
      .strategy = sched::strategy_name(c.strategy),
      .stop = stop,
      .executions = run.executions,
      .cap = c.executions,
      .proves = proves,
      .bounded = sched::strategy_info(c.strategy).bounded,
      .found = found,
      .lost_control = run.exit_code == 3 || run.kinds.count(sched::kinds::kLostControl) > 0};
  if (!facts.lost_control && run.exit_code == 2)
    facts.error = "racelab refused the case: " + last_line(log);
  results::Verdict v =
      results::judge({.must = s.must, .must_not = s.must_not, .memory = memory_expect}, facts,
                     memory, results::live_case_wording());
  if (v.why == results::Why::kLostControl) v.reason += fmt::format("; see {}/report.json", out_dir);
  run.verdict = v.outcome;
  run.reason = v.reason;
  const results::ExpectationCheck check = results::check_expectations(s.must, s.must_not, found);
  run.missing = check.missing;
  run.unexpected = check.unexpected;
  return run;
}

}  // namespace racelab::run
