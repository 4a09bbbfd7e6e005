#include "model/live_case.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "model/check.h"
#include "model/expect.h"
#include "sched/kinds.h"
#include "sched/loop.h"
#include "sched/strategies/strategies.h"
#include "util/document.h"
#include "util/errors.h"
#include "util/files.h"
#include "util/spawn.h"
#include "util/text.h"

namespace racelab::model {

namespace fs = std::filesystem;

const char* live_verdict_word(LiveVerdict v) {
  switch (v) {
    case LiveVerdict::kPass:
      return "PASS";
    case LiveVerdict::kFail:
      return "FAIL";
    case LiveVerdict::kInconclusive:
      return "INCONCLUSIVE";
    case LiveVerdict::kSkipped:
      return "SKIP";
  }
  return "?";
}

const char* live_verdict_name(LiveVerdict v) {
  switch (v) {
    case LiveVerdict::kPass:
      return "pass";
    case LiveVerdict::kFail:
      return "fail";
    case LiveVerdict::kInconclusive:
      return "inconclusive";
    case LiveVerdict::kSkipped:
      return "skipped";
  }
  return "?";
}

std::string LiveCaseRun::command() const {
  return argv.empty() && !recorded_command.empty() ? recorded_command : shell_line(argv);
}

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
// and report (null when it wrote none).
struct Attempt {
  std::vector<std::string> argv;
  int exit_code = 0;
  double seconds = 0;
  nlohmann::json report;
  std::string log;
};

Attempt run_once(const Scenario& s, const std::string& racelab, const std::string& out,
                 std::uint64_t seed, const LivePython& python) {
  const LiveCase& c = *s.live;
  const fs::path dir = fs::absolute(s.path).parent_path();
  Attempt at;
  at.argv = {racelab,
             "live",
             "python",
             "--interpose",
             c.interpose,
             "--strategy",
             c.strategy,
             "--max-preemptions",
             std::to_string(c.max_preemptions),
             "--seed",
             std::to_string(seed),
             "--executions",
             std::to_string(c.executions),
             "--hang-timeout",
             fmt::format("{}", c.hang_timeout),
             "--expect",
             s.must.empty() ? "clean" : "deadlock",
             "--out",
             out};
  for (const auto& d : c.dicts) at.argv.push_back("--dict=" + d);
  for (const auto& l : c.locks) at.argv.push_back("--lock=" + l);
  for (const auto& p : c.points) at.argv.push_back("--point=" + p);
  for (const auto& b : c.blocking) at.argv.push_back("--blocking=" + b);
  for (auto& f : python.flags(true)) at.argv.push_back(std::move(f));
  at.argv.push_back(relative_to(dir, c.script));
  if (!c.args.empty()) {
    at.argv.push_back("--");
    at.argv.insert(at.argv.end(), c.args.begin(), c.args.end());
  }
  const std::string python_path = python_path_of(c, dir);
  ensure_directory(out);
  at.log = (fs::path(out) / "live.log").string();
  std::error_code ec;
  fs::remove(fs::path(out) / "report.json", ec);
  const auto t0 = std::chrono::steady_clock::now();
  at.exit_code = spawn_and_wait(at.argv, python_path, at.log);
  at.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  at.report = read_live_report(fs::path(out) / "report.json");
  return at;
}

}  // namespace

std::vector<std::string> LivePython::flags(bool controlled) const {
  std::vector<std::string> v;
  if (!env.empty()) v.push_back("--python=" + env);
  if (controlled && refuse_other_torch) v.emplace_back("--refuse-other-torch");
  return v;
}

nlohmann::json read_live_report(const fs::path& path) {
  nlohmann::json report;
  try {
    report = nlohmann::json::parse(read_file(path.string()));
  } catch (const std::exception&) {
    return nullptr;  // none, or cut off: the child died first, and its log says why
  }
  check_format(report, path.string(), kLiveReportFormat, kLiveReportVersion,
               "the report.json of racelab live python --out");
  return report;
}

LiveCaseRun run_live_case(const Scenario& s, const std::string& racelab, const std::string& out_dir,
                          const LivePython& python) {
  const LiveCase& c = *s.live;
  const fs::path dir = fs::absolute(s.path).parent_path();
  LiveCaseRun run;
  run.scenario = s;
  run.out_dir = out_dir;
  if (c.requires_cuda && !fs::exists("/dev/nvidiactl")) {
    run.verdict = LiveVerdict::kSkipped;
    run.reason = "requires CUDA, and this machine has no NVIDIA device (/dev/nvidiactl)";
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
    if (at.report.is_null()) {
      run.verdict = LiveVerdict::kFail;
      run.reason = fmt::format("racelab live python exited {} without a report: {} (see {})",
                               at.exit_code, last_line(at.log), at.log);
      return run;
    }
    const std::uint64_t executions = at.report.value("executions", std::uint64_t{0});
    run.executions += executions;
    stop = sched::parse_stop_reason(at.report.value("stopped_by", "budget"))
               .value_or(sched::StopReason::kBudget);
    proves = at.report.value("proves", false);
    if (at.report.contains("versions") && at.report["versions"].is_object())
      run.outside_verified = at.report["versions"].value("outside", "");
    if (at.report.contains("kinds_seen") && at.report["kinds_seen"].is_object()) {
      for (const auto& [kind, n] : at.report["kinds_seen"].items())
        run.kinds[kind] += n.get<std::uint64_t>();
    }
    for (const auto& f : at.report.value("findings", nlohmann::json::array()))
      if (f.contains("kind") && !run.kinds.count(f["kind"])) run.kinds[f["kind"]] = 1;
    if (at.exit_code == 2 || at.exit_code == 3) break;
    const bool missing = std::any_of(s.must.begin(), s.must.end(),
                                     [&](const std::string& m) { return !run.kinds.count(m); });
    // Another seed only changes a seeded (sampling) search: dfs ignores the seed.
    if (!missing || executions >= c.executions ||
        !sched::strategy_info(sched::parse_strategy(c.strategy)).seeded)
      break;
  }
  std::string memory_problem;  // why the allocator expectation does not hold
  std::string memory_unknown;  // why it could not be checked (not measured: inconclusive)
  if (!c.alloc.empty() && run.exit_code != 2 && run.exit_code != 3) {
    const MemoryVerdict m = capture_memory(racelab, relative_to(dir, c.script), c.args, c.interpose,
                                           python, python_path_of(c, dir), c.alloc_time_limit,
                                           c.alloc_settle, (fs::path(out_dir) / "memory").string());
    run.memory = memory_state_name(m.state);
    run.memory_summary = memory_summary(m);
    run.seconds += m.seconds;
    if (!m.failure.empty())
      memory_problem = "the allocator capture run failed: " + run.memory_summary;
    else if (m.state == MemoryVerdict::State::kNotMeasured)
      memory_unknown = fmt::format("memory expected {}, {}", c.alloc, run.memory_summary);
    else if (run.memory != c.alloc)
      memory_problem = fmt::format("memory expected {}, got {}", c.alloc, run.memory_summary);
  }
  run.strategy = c.strategy;
  run.proven = proves && stop == sched::StopReason::kExhausted;
  std::vector<std::string> found;
  for (const auto& [kind, executions] : run.kinds) found.push_back(kind);
  ExpectationCheck check = check_expectations(s.must, s.must_not, found);
  run.missing = check.missing;
  run.unexpected = check.unexpected;
  const std::string log = (fs::path(out_dir) / "live.log").string();
  if (run.exit_code == 3 || run.kinds.count(sched::kinds::kLostControl)) {
    run.verdict = LiveVerdict::kInconclusive;
    run.reason = fmt::format(
        "inconclusive: racelab lost control of a thread (a call it does not control), so the run "
        "says nothing about the program; see {}/report.json",
        out_dir);
  } else if (run.exit_code == 2) {
    run.verdict = LiveVerdict::kFail;
    run.reason = "racelab refused the case: " + last_line(log);
  } else {
    // The one rule (sched::expectation_verdict): a `must` kind missing from a search that did
    // not finish, or a `must_not` absence a proving search cut short did not prove, is
    // inconclusive; a memory expectation that does not hold fails like a `must_not` kind found.
    const sched::ExpectationVerdict v = sched::expectation_verdict(
        {.proves = proves,
         .stop = stop,
         .must_missing = !check.missing.empty(),
         .wrong_found = !check.unexpected.empty() || !memory_problem.empty(),
         .claims_absence = !s.must_not.empty()});
    const bool bounded = sched::strategy_info(sched::parse_strategy(c.strategy)).bounded;
    const std::string remedy = stop == sched::StopReason::kTimeLimit
                                   ? "raise or drop the time limit"
                               : stop == sched::StopReason::kInterrupted
                                   ? "let it run to the end"
                                   : "raise [live] executions or lower max_preemptions";
    if (v == sched::ExpectationVerdict::kFails) {
      run.verdict = LiveVerdict::kFail;
      std::string why = expectation_reason(check);
      if (!memory_problem.empty()) why += std::string(why.empty() ? "" : "; ") + memory_problem;
      run.reason = why;
    } else if (v == sched::ExpectationVerdict::kInconclusive) {
      run.verdict = LiveVerdict::kInconclusive;
      run.reason = !check.missing.empty()
                       ? sched::unfinished_sentence(
                             c.strategy, stop, run.executions, c.executions, proves, bounded,
                             fmt::format("{}", fmt::join(check.missing, ", ")), remedy)
                       : sched::cut_short_sentence(
                             c.strategy, stop, run.executions, bounded,
                             fmt::format("must_not [{}]", fmt::join(s.must_not, ", ")), remedy);
    } else if (!memory_unknown.empty()) {
      // Too few iterations after the warm phase (or no CUDA): nothing shown either way.
      run.verdict = LiveVerdict::kInconclusive;
      run.reason = "inconclusive: " + memory_unknown;
    }
  }
  return run;
}

}  // namespace racelab::model
