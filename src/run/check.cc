// racelab check's runs and verdicts (check.h).
#include "run/check.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <sstream>

#include "alloc/diff.h"
#include "alloc/outputs.h"
#include "alloc/runs.h"
#include "alloc/snapshot.h"
#include "report/live_report_read.h"
#include "run/live_case.h"
#include "sched/kinds.h"
#include "sched/loop.h"
#include "sched/strategies/strategies.h"
#include "util/errors.h"
#include "util/files.h"
#include "util/spawn.h"
#include "util/text.h"

namespace racelab::run {

namespace fs = std::filesystem;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// "--warmup sequential" -> "warmup-sequential", for a directory name.
std::string slug(const std::string& text, std::size_t index) {
  std::string out;
  for (char c : text) {
    const bool word = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_';
    if (word)
      out += c;
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  if (out.size() > 60) out.resize(60);
  return fmt::format("{}-{}", index, out.empty() ? "as-given" : out);
}

// The flags every `racelab live python` child of a check shares: the table's and the interpreter's
// (`controlled` false: an uncontrolled run, which checks no versions, LivePython::flags).
std::vector<std::string> live_flags(const CheckOptions& o, bool controlled) {
  std::vector<std::string> v = o.python.flags(controlled);
  for (const auto& d : o.dicts) v.push_back("--dict=" + d);
  for (const auto& l : o.locks) v.push_back("--lock=" + l);
  for (const auto& p : o.points) v.push_back("--point=" + p);
  for (const auto& b : o.blocking) v.push_back("--blocking=" + b);
  return v;
}

// One `racelab live python` child: its argv, log and report.json (none where it wrote none).
struct LiveRun {
  std::vector<std::string> argv;
  std::string log;
  int code = 0;
  double seconds = 0;
  std::optional<report::LiveReportSummary> report;
};

LiveRun run_live(const CheckOptions& o, const std::string& racelab,
                 const std::vector<std::string>& args, const std::string& out,
                 sched::StrategyKind strategy, std::uint64_t executions,
                 std::optional<unsigned> jobs = std::nullopt) {
  LiveRun run;
  ensure_directory(out);
  run.argv = live_python_argv({.racelab = racelab,
                               .interpose = o.interpose,
                               .strategy = strategy,
                               .seed = o.seed,
                               .executions = executions,
                               .jobs = jobs,
                               .hang_timeout = o.hang_timeout,
                               .time_limit = o.time_limit,
                               .expect = results::live_expect_name(results::LiveExpect::kClean),
                               .out = out,
                               .flags = live_flags(o, true),
                               .script = o.script,
                               .args = args});
  run.log = (fs::path(out) / "live.log").string();
  std::error_code ec;
  fs::remove(fs::path(out) / "report.json", ec);
  const auto t0 = std::chrono::steady_clock::now();
  run.code = spawn_and_wait(run.argv, "", run.log);
  run.seconds = seconds_since(t0);
  // Exit 2 is racelab refusing what every variant shares (the script, the table, a --dict,
  // --lock, --point or --blocking entry): the check's own bad input, its one line.
  if (run.code == 2) {
    std::string line = last_line(run.log);
    const std::string prefix = "racelab: error: ";
    if (line.rfind(prefix, 0) == 0) line.erase(0, prefix.size());
    throw InputError(line);
  }
  run.report = report::read_live_report(fs::path(out) / "report.json");
  return run;
}

// The first finding of a live report into the verdict; the state from the exit code: 3 or a
// crash of racelab's own is inconclusive (a crash of the program's, found), 1 with a finding
// found, a nondeterministic subject inconclusive.
void take_finding(RaceVerdict& r, const LiveRun& run) {
  const auto& findings = run.report->findings;
  if (!findings.empty()) {
    r.kind = findings[0].kind;
    r.message = findings[0].message;
    r.execution = findings[0].execution;
    r.schedule = run.report->schedule;
    r.stack = findings[0].stack;
  }
  if (run.report->crashed) {
    r.state = RaceVerdict::State::kFound;
  } else if (run.code == 3 || r.kind == sched::kinds::kNondeterministic) {
    r.state = RaceVerdict::State::kInconclusive;
    if (r.kind == sched::kinds::kNondeterministic)
      r.reason = "the program was not deterministic under control: " + first_line(r.message);
  } else {
    // Exit 1 without a finding is a search that did not finish (a proof cut short): the caller
    // judges it by the report's `exhausted`.
    r.state = run.code != 0 && !findings.empty() ? RaceVerdict::State::kFound
                                                 : RaceVerdict::State::kClean;
  }
}

bool stop_now(const CheckOptions& o) { return o.interrupt != nullptr && o.interrupt->load(); }

RaceVerdict search_races(const CheckOptions& o, const std::string& racelab,
                         const std::vector<std::string>& args, const std::string& dir,
                         const std::function<void()>& proving) {
  RaceVerdict r;
  // The hunt: a sample, the soonest to a failure.
  const LiveRun hunt =
      run_live(o, racelab, args, (fs::path(dir) / "races").string(), o.strategy, o.executions);
  r.argv = hunt.argv;
  r.log = hunt.log;
  r.seconds = hunt.seconds;
  if (!hunt.report) {
    r.state = RaceVerdict::State::kError;
    r.reason = fmt::format("racelab live python exited {}: {}", hunt.code, last_line(hunt.log));
    return r;
  }
  r.executions = hunt.report->executions;
  r.budget = o.executions;
  r.stopped_by = hunt.report->stopped_by;
  r.outside_verified = hunt.report->outside_verified;
  r.kinds = hunt.report->kinds_seen;
  take_finding(r, hunt);
  // An interrupt leaves the proof out (run_check says so).
  if (r.state != RaceVerdict::State::kClean || !o.prove || stop_now(o)) return r;

  // The proof: dpor without a bound over what racelab sees, to exhaustion or its cap.
  proving();
  const LiveRun proof = run_live(
      o, racelab, args, (fs::path(dir) / "proof").string(), sched::live_prover().kind,
      o.proof_executions, o.proof_jobs != 1 ? std::optional<unsigned>(o.proof_jobs) : std::nullopt);
  RaceVerdict::Proof& p = r.proof;
  p.ran = true;
  p.argv = proof.argv;
  p.log = proof.log;
  p.seconds = proof.seconds;
  p.budget = o.proof_executions;
  if (!proof.report) {
    r.state = RaceVerdict::State::kError;
    r.reason = fmt::format("the dpor proof (racelab live python) exited {}: {}", proof.code,
                           last_line(proof.log));
    return r;
  }
  p.executions = proof.report->executions;
  p.exhausted = proof.report->exhausted;
  p.stopped_by = proof.report->stopped_by;
  p.covers = proof.report->proof_covers;
  p.classes = proof.report->classes_seen.value_or(0);
  for (const auto& [k, n] : proof.report->kinds_seen) r.kinds[k] += n;
  take_finding(r, proof);
  if (r.state == RaceVerdict::State::kFound) {
    // Found by the proof where the sample missed it: its log and command are the proof's.
    r.argv = p.argv;
    r.log = p.log;
  } else if (r.state == RaceVerdict::State::kClean) {
    // The rule (results::judge): an absence that the proof, cut short, did not prove.
    const results::Verdict v =
        results::judge({.no_failure = true},
                       {.strategy = sched::live_prover().name,
                        .stop = p.stopped_by.value_or(sched::StopReason::kBudget),
                        .executions = p.executions,
                        .cap = p.budget,
                        .proves = true},
                       std::nullopt, results::check_wording());
    r.state = v.passed() ? RaceVerdict::State::kProven : RaceVerdict::State::kInconclusive;
    r.reason = v.reason;
  }
  return r;
}

// A device's memory as check.json and check.html give it, from alloc report's analysis.
DeviceMemory device_memory(const alloc::StabilityReport& r) {
  DeviceMemory d;
  d.name = r.name;
  d.stable = r.stable;
  // Too few iterations after the warm phase to tell.
  d.measured = r.measured;
  d.verdict = r.verdict;
  if (r.stable) d.stable_from = static_cast<std::int64_t>(r.stable_from);
  d.peak_reserved = static_cast<std::int64_t>(r.peak_reserved);
  d.growth_at = r.growth_at;
  d.iterations = r.rows.size();
  constexpr double kMiB = 1024.0 * 1024.0;
  for (const alloc::Row& row : r.rows) {
    d.labels.push_back(row.label);
    d.reserved_mib.push_back(static_cast<double>(row.at_end.reserved) / kMiB);
    d.allocated_mib.push_back(static_cast<double>(row.at_end.allocated) / kMiB);
  }
  if (!r.rows.empty()) {
    d.segments_first = static_cast<std::int64_t>(r.rows.front().at_end.segments);
    d.segments_last = static_cast<std::int64_t>(r.rows.back().at_end.segments);
    d.reserved_first = static_cast<std::int64_t>(r.rows.front().at_end.reserved);
    d.reserved_last = static_cast<std::int64_t>(r.rows.back().at_end.reserved);
  }
  return d;
}

alloc::ReportSettings report_settings(std::int64_t settle) {
  alloc::ReportSettings settings;
  if (settle >= 0) settings.settle = static_cast<std::size_t>(settle);
  return settings;
}

}  // namespace

std::vector<std::string> split_arguments(const std::string& text) {
  std::vector<std::string> out;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"' && i + 1 < text.size()) {
        word += text[++i];
      } else {
        word += c;
      }
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < text.size()) {
      word += text[++i];
      in_word = true;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      if (in_word) out.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote != 0) throw InputError(fmt::format("--variant \"{}\": unclosed {} quote", text, quote));
  if (in_word) out.push_back(word);
  return out;
}

MemoryVerdict capture_memory(const std::string& racelab, const std::string& script,
                             const std::vector<std::string>& args, const std::string& interpose,
                             const LivePython& python, const std::string& python_path,
                             double time_limit, std::int64_t settle, const std::string& dir) {
  MemoryVerdict m;
  const fs::path base(dir);
  const fs::path alloc = base / "alloc", plain = base / "plain";
  std::error_code ec;
  fs::remove_all(alloc, ec);
  ensure_directory(plain.string());
  m.argv = live_python_argv({.racelab = racelab,
                             .uncontrolled = true,
                             .interpose = interpose,
                             .alloc = alloc.string(),
                             .time_limit = time_limit,
                             .out = plain.string(),
                             .flags = python.flags(false),
                             .script = script,
                             .args = args});
  m.log = (plain / "live.log").string();
  const auto t0 = std::chrono::steady_clock::now();
  const int code = spawn_and_wait(m.argv, python_path, m.log);
  const std::optional<report::LiveReportSummary> rep =
      report::read_live_report(plain / "report.json");
  m.seconds = seconds_since(t0);
  if (code == 2 || !rep) {
    const std::string line = last_line(m.log);
    const bool unmeasurable = line.find("--alloc:") != std::string::npos;
    m.state = unmeasurable ? MemoryVerdict::State::kNotMeasured : MemoryVerdict::State::kError;
    m.reason = unmeasurable ? line.substr(line.find("--alloc:") + 9)
                            : fmt::format("the capture run exited {}: {}", code, line);
    return m;
  }
  m.ended = "complete";
  if (!rep->findings.empty()) {
    const report::LiveReportFinding& f = rep->findings.front();
    m.ended = f.kind.empty() ? "exception" : f.kind;
    m.failure = f.message;
  }
  std::vector<std::string> pickles;
  if (fs::is_directory(alloc))
    for (const auto& e : fs::directory_iterator(alloc)) {
      const std::string n = e.path().filename().string();
      if (n.rfind("snap_", 0) == 0 && e.path().extension() == ".pickle")
        pickles.push_back(e.path().string());
    }
  std::sort(pickles.begin(), pickles.end());
  if (pickles.empty()) {
    m.state = MemoryVerdict::State::kNotMeasured;
    m.reason = "the run made no CUDA allocation";
    return m;
  }
  m.report_dir = (base / "alloc-report").string();
  m.settle = settle;
  // alloc report's analysis, in this process (alloc/runs.h), and its files in alloc-report/. The
  // warm phase comes from the capture (alloc/warm_phase.h) unless the user gave --settle.
  alloc::TraceReports got;
  try {
    got = alloc::analyse_traces(pickles, {}, -1, report_settings(settle), {});
    alloc::write_report_outputs(m.report_dir, got.reports);
  } catch (const std::exception& e) {
    m.seconds = seconds_since(t0);
    m.state = MemoryVerdict::State::kError;
    m.reason = fmt::format("alloc report: {}", first_line(e.what()));
    return m;
  }
  m.seconds = seconds_since(t0);
  for (const alloc::StabilityReport& r : got.reports) m.devices.push_back(device_memory(r));
  // Growth on any device is not stable; otherwise a device with too few iterations after its
  // warm phase leaves the run not measured.
  const bool grew = std::any_of(m.devices.begin(), m.devices.end(),
                                [](const DeviceMemory& d) { return d.measured && !d.stable; });
  const auto unmeasured = std::find_if(m.devices.begin(), m.devices.end(),
                                       [](const DeviceMemory& d) { return !d.measured; });
  if (grew) {
    m.state = MemoryVerdict::State::kUnstable;
  } else if (unmeasured != m.devices.end()) {
    m.state = MemoryVerdict::State::kNotMeasured;
    m.reason = unmeasured->verdict;
  } else {
    m.state = MemoryVerdict::State::kStable;
  }
  return m;
}

namespace {

NativeRuns run_native(const CheckOptions& o, const std::string& racelab,
                      const std::vector<std::string>& args, const std::string& dir) {
  NativeRuns n;
  const auto t0 = std::chrono::steady_clock::now();
  for (std::uint64_t k = 0; k < o.native_runs && !stop_now(o); ++k) {
    const fs::path out = fs::path(dir) / fmt::format("native-{}", k + 1);
    ensure_directory(out.string());
    const std::vector<std::string> argv = live_python_argv({.racelab = racelab,
                                                            .uncontrolled = true,
                                                            .interpose = o.interpose,
                                                            .time_limit = o.time_limit,
                                                            .out = out.string(),
                                                            .flags = live_flags(o, false),
                                                            .script = o.script,
                                                            .args = args});
    const std::string log = (out / "live.log").string();
    std::error_code ec;
    fs::remove(out / "report.json", ec);
    const int code = spawn_and_wait(argv, "", log);
    const std::optional<report::LiveReportSummary> rep =
        report::read_live_report(out / "report.json");
    ++n.runs;
    if (n.argv.empty()) n.argv = argv;
    if (n.failed == 0) n.log = log;
    const std::vector<report::LiveReportFinding> none;
    const auto& findings = rep ? rep->findings : none;
    if (code == 0 && findings.empty()) continue;
    if (n.failed++ != 0) continue;
    if (!findings.empty()) {
      n.kind = findings[0].kind.empty() ? "exception" : findings[0].kind;
      n.message = findings[0].message;
      n.stack = findings[0].stack;
    } else {
      n.kind = "exit";
      n.message = fmt::format("the uncontrolled run exited {}: {}", code, last_line(log));
    }
  }
  n.seconds = seconds_since(t0);
  return n;
}

// What `racelab alloc diff STABLE GROWN` prints for one device's two traces, computed here
// (alloc/diff.h): each trace's warnings, then the diff's lines, the summary first.
std::vector<std::string> memory_diff_lines(const std::string& stable, const std::string& grown,
                                           std::int64_t settle) {
  std::vector<std::string> lines;
  auto side = [&](const std::string& path) {
    const alloc::Snapshot snap = alloc::read_snapshot(path);
    const std::vector<std::size_t> devices = alloc::pick_devices(snap, -1, path);
    if (devices.size() > 1)
      throw InputError(
          fmt::format("{}: {} devices have traces; alloc diff compares one", path, devices.size()));
    alloc::TraceReports got = alloc::analyse_trace(
        snap, path, devices, alloc::stats_for(path, std::nullopt), report_settings(settle), {});
    for (std::string& w : got.warnings) lines.push_back(std::move(w));
    return alloc::run_side(got.reports.front(), snap.stacks);
  };
  alloc::DiffSide a = side(stable);
  alloc::DiffSide b = side(grown);
  if (a.name == b.name) {  // two runs of one script: the same trace name
    a.name = "A " + a.name;
    b.name = "B " + b.name;
  }
  for (std::string& line : alloc::diff_lines(alloc::diff_sides(a, b))) lines.push_back(line);
  // As the lines of alloc diff's output: one per line, none empty.
  std::vector<std::string> out;
  for (const std::string& text : lines) {
    std::istringstream split(text);
    for (std::string line; std::getline(split, line);)
      if (!line.empty()) out.push_back(line);
  }
  return out;
}

// A variant whose memory did not settle, explained against the first variant whose memory did:
// alloc diff of the stable variant's trace against this one's, on each device that grew (the
// same trace name in both), its lines kept with the variant (docs/allocator.md, diff).
void explain_growth(CheckResult& r, std::int64_t settle) {
  const auto stable = std::find_if(r.variants.begin(), r.variants.end(), [](const auto& v) {
    return v.memory.state == MemoryVerdict::State::kStable;
  });
  if (stable == r.variants.end()) return;
  auto trace_of = [](const VariantResult& v, const std::string& name) {
    return (fs::path(v.dir) / "alloc" / ("snap_" + name + ".pickle")).string();
  };
  for (VariantResult& v : r.variants) {
    if (v.memory.state != MemoryVerdict::State::kUnstable) continue;
    for (const DeviceMemory& d : v.memory.devices) {
      if (d.stable || !d.measured) continue;
      const auto& others = stable->memory.devices;
      if (std::none_of(others.begin(), others.end(),
                       [&](const DeviceMemory& x) { return x.name == d.name; }))
        continue;
      v.memory.against = stable->name;
      try {
        for (std::string& line :
             memory_diff_lines(trace_of(*stable, d.name), trace_of(v, d.name), settle))
          v.memory.explanation.push_back(std::move(line));
      } catch (const std::exception& e) {
        v.memory.explanation.push_back(
            fmt::format("{}: alloc diff: {}", d.name, first_line(e.what())));
      }
    }
  }
}

}  // namespace

CheckResult run_check(const CheckOptions& o, const std::string& racelab,
                      const std::function<void(const std::string&)>& note) {
  expect_script(o.script);
  if (o.executions == 0) throw InputError("--executions: expected a positive integer, got 0");
  if (o.prove && o.proof_executions == 0)
    throw InputError("--proof-executions: expected a positive integer, got 0");
  std::vector<std::pair<std::string, std::vector<std::string>>> sets;
  if (o.variants.empty()) sets.push_back({"(as given)", o.args});
  for (const auto& v : o.variants) {
    std::vector<std::string> a = o.args;
    for (auto& w : split_arguments(v)) a.push_back(std::move(w));
    sets.push_back({v, std::move(a)});
  }
  CheckResult result;
  const auto t0 = std::chrono::steady_clock::now();
  ensure_directory(o.out);
  const std::string script = fs::absolute(o.script).string();
  for (std::size_t k = 0; k < sets.size(); ++k) {
    // After an interrupt nothing more runs: the variants left are named as not run.
    if (stop_now(o)) {
      result.not_run.push_back(sets[k].first);
      continue;
    }
    VariantResult v;
    v.name = sets[k].first;
    v.args = sets[k].second;
    v.dir = (fs::path(o.out) / slug(v.name == "(as given)" ? "" : v.name, k)).string();
    ensure_directory(v.dir);
    CheckOptions with_script = o;
    with_script.script = script;
    note(fmt::format("[{}/{}] {}: races, the hunt ({} executions, {})", k + 1, sets.size(), v.name,
                     o.executions, sched::strategy_name(o.strategy)));
    v.races = search_races(with_script, racelab, v.args, v.dir, [&] {
      note(fmt::format("[{}/{}] {}: races, the proof (dpor without a bound, at most {} executions)",
                       k + 1, sets.size(), v.name, o.proof_executions));
    });
    // Where control found nothing (clean, proven, or a proof cut short), uncontrolled runs look
    // for what it cannot reach; a failure found under control needs none.
    const bool nothing_found = v.races.state == RaceVerdict::State::kClean ||
                               v.races.state == RaceVerdict::State::kProven ||
                               v.races.state == RaceVerdict::State::kInconclusive;
    // Where an interrupt came: the step it came in and the steps it leaves out of this variant.
    auto interrupted = [&](const char* step, bool races_done, bool native_done) {
      if (!stop_now(o)) return false;
      v.interrupted_in = step;
      if (!races_done && o.prove && v.races.state == RaceVerdict::State::kClean &&
          !v.races.proof.ran)
        v.not_run.emplace_back("races, the proof");
      if (!native_done && nothing_found && o.native_runs > 0) v.not_run.emplace_back("native runs");
      if (o.memory) v.not_run.emplace_back("memory");
      v.memory.reason = o.memory ? "not run (interrupted)" : "not asked for (--no-memory)";
      result.variants.push_back(std::move(v));
      return true;
    };
    if (interrupted(v.races.proof.ran ? "races, the proof" : "races, the hunt", false, false))
      continue;
    if (nothing_found && o.native_runs > 0) {
      note(fmt::format("[{}/{}] {}: {} uncontrolled run(s), for what control cannot reach", k + 1,
                       sets.size(), v.name, o.native_runs));
      v.native = run_native(with_script, racelab, v.args, v.dir);
      if (interrupted("native runs", true, true)) continue;
    }
    if (o.memory) {
      note(fmt::format("[{}/{}] {}: memory (one uncontrolled run with the allocator capture)",
                       k + 1, sets.size(), v.name));
      v.memory = capture_memory(racelab, script, v.args, o.interpose, o.python, "", o.time_limit,
                                o.settle, v.dir);
      if (stop_now(o)) v.interrupted_in = "memory";
    } else {
      v.memory.reason = "not asked for (--no-memory)";
    }
    result.variants.push_back(std::move(v));
  }
  if (o.memory) explain_growth(result, o.settle);
  result.interrupted = stop_now(o);
  result.seconds = seconds_since(t0);
  return result;
}

}  // namespace racelab::run
