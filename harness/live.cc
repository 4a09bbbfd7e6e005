// racelab live torch | alloc: live subjects on real threads (src/live).
//
//   racelab live torch --drafters N --warmup MODE [--device cpu|cuda] ...  runs the LibTorch
//     drafter workload under the scheduler, execution after execution, until a failure (deadlock,
//     hang, exception) or the budget; writes report.json, trace.txt and the failing schedule.
//   racelab live torch --replay SCHEDULE  runs the recorded schedule again.
//   racelab live alloc --attention fused|chunked|dense ...  records the CUDA caching allocator's
//     history of the drafter step and hands it to the allocator report.
//
// A hang cannot be unwound (threads are stuck inside LibTorch), so after writing its results the
// command ends the process at once with exit code 1.
#include "live/live.h"

#include <fmt/format.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>

#include "command.h"
#include "live/python/bridge.h"
#include "live/python/follow.h"
#include "live/search.h"
#include "live/torch/workload.h"
#include "racelab/version.h"
#include "sched/schedule.h"
#include "sched/strategies/strategies.h"
#include "util/doctor.h"
#include "util/errors.h"
#include "util/files.h"

namespace racelab::cli {

namespace {

namespace tw = live::torch_workload;
using live::finding_json;
using live::is_failure;
using live::JobInfo;
using live::lost_thread;
using live::Outcome;
using live::thread_stack;
using live::worst_failure;

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct LiveArgs {
  tw::Config cfg;
  std::string seq_lens = "128";
  std::string strategy = "pct";
  std::uint64_t seed = 1;
  int depth = 3;
  int preemptions = 2;
  std::uint64_t executions = 10;
  double time_limit = 0;
  double hang_timeout = 10;
  int settle_ms = 10;
  int cycle_confirm_ms = 2000;
  std::string expect = "clean";
  std::string replay;
  std::string out = "racelab-out/live-torch";
  bool no_warmup_backward = false;
  bool rr = false;
  int overhead_steps = 0;
  // live python
  std::string script;
  std::vector<std::string> script_args;
  std::string interpose = "torch-2.11";
  std::vector<std::string> dicts, locks, points, blockings;  // live python: table entries
  std::string follow;  // a model schedule to force on the live run
  std::string alloc;   // live python --alloc DIR: record the CUDA allocator (the first execution)
  bool uncontrolled = false;  // live python --uncontrolled: one plain run, real threads
};

// --rr: runs this same command (without --rr) under `rr record --chaos` and prints the rr replay
// command. rr's capability check is racelab doctor's (check_rr): where rr cannot record, exit 2
// with its reason and the schedule-replay alternative.
int run_under_rr(const LiveArgs& a) {
  const std::string device =
      a.replay.empty() ? a.cfg.device
                       : sched::read_schedule(a.replay).parameters.value("device", std::string());
  if (device == "cuda")
    throw InputError(
        "--rr: rr cannot record a CUDA run (the NVIDIA driver's ioctls and device memory mappings "
        "are outside what rr records); replay the schedule instead: racelab live torch --replay "
        "SCHEDULE");
  const DoctorItem rr = check_rr();
  if (!rr.ok)
    throw InputError(
        fmt::format("--rr: {} (racelab live torch --replay SCHEDULE replays a run "
                    "without rr)",
                    rr.value));
  std::vector<std::string> args = {"rr", "record", "--chaos", "/proc/self/exe"};
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) args.back() = self.string();
  const auto& argv = program_args();
  for (std::size_t i = 1; i < argv.size(); ++i)
    if (argv[i] != "--rr") args.push_back(argv[i]);
  ensure_directory(a.out);
  const std::string trace_dir = (std::filesystem::path(a.out) / "rr").string();
  ensure_directory(trace_dir);
  std::string command = "_RR_TRACE_DIR=" + shell_quote(trace_dir);
  for (const auto& s : args) command += " " + shell_quote(s);
  fmt::print("recording under rr: {}\n", command);
  std::fflush(stdout);
  const int status = std::system(command.c_str());
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : kExitInternal;
  fmt::print("rr trace: {}/latest-trace\n  rr replay {}/latest-trace\n", trace_dir, trace_dir);
  return code;
}

std::vector<int> parse_lengths(const std::string& text, const std::string& flag) {
  std::vector<int> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    try {
      std::size_t used = 0;
      const int v = std::stoi(item, &used);
      if (used != item.size()) throw std::invalid_argument(item);
      out.push_back(v);
    } catch (const std::exception&) {
      throw InputError(fmt::format("{}: '{}' is not a length (expected e.g. 128,256)", flag, item));
    }
    pos = comma + 1;
  }
  return out;
}

live::SearchOptions search_options(const LiveArgs& a);

int finish(const LiveArgs& a, const JobInfo& info, const Outcome& o,
           const std::string& strategy_desc) {
  const std::string schedule = live::write_outputs(search_options(a), info, o, strategy_desc);
  const live::Judgement verdict = live::judge(search_options(a), o);
  const bool failed = verdict.failed;
  const bool inconclusive = verdict.inconclusive;
  if (o.failure) {
    for (const auto& f : o.failure->findings) {
      if (!is_failure(f.kind) && !sched::kinds::is_inconclusive(f.kind)) continue;
      fmt::print("{} (execution {}, {} decisions): {}\n", paint(f.kind, Colour::kRed),
                 o.failure_execution, o.failure->choices.size(), f.message);
      for (const auto& d : f.details) fmt::print("  {}\n", d);
      if (f.kind == sched::kinds::kLostControl) {
        const std::string stack =
            thread_stack(std::filesystem::path(a.out) / "stacks.txt", lost_thread(f));
        if (!stack.empty())
          fmt::print(
              "  its Python stack (innermost last; the C function it waits in is below "
              "the last frame):\n{}",
              stack);
      }
    }
    if (!schedule.empty())
      fmt::print("  replay: racelab {} --replay {}{}\n", info.command, schedule,
                 o.failure->hung ? fmt::format(" (the process exits now: threads are stuck in {})",
                                               info.stuck_in)
                                 : "");
  }
  for (const auto& [kind, n] : o.kinds) {
    if (!is_failure(kind)) fmt::print("{}: seen in {} of {} execution(s)\n", kind, n, o.executions);
  }
  if (o.other) {
    const auto f = worst_failure(*o.other);
    fmt::print(
        "{} (execution {}, searched past it): {}\n  replay: racelab {} --replay "
        "{}/schedule-{}.json\n",
        paint(f->kind, Colour::kRed), o.other_execution, f->message, info.command, a.out, f->kind);
    for (const auto& [kind, n] : o.kinds)
      if (is_failure(kind) && kind != sched::kinds::kDeadlock && kind != live::kinds::kHang)
        fmt::print("{}: seen in {} of {} execution(s)\n", kind, n, o.executions);
  }
  if (!failed && !inconclusive)
    fmt::print("{}\n", paint("no deadlock, hang or exception", Colour::kGreen));
  if (o.interrupted) fmt::print("interrupted: results so far written\n");
  if (o.time_limit) fmt::print("time limit reached: results so far written\n");
  fmt::print("{} execution(s){} in {:.2f} s on {}\n", o.executions,
             o.exhausted ? " (exhaustive within the bound)" : "", o.seconds, info.build);
  fmt::print("report: {}/report.json, {}/trace.txt\n", a.out, a.out);
  const bool want_deadlock = a.expect == "deadlock";
  if (inconclusive) {
    fmt::print(
        "{}: racelab lost control of a thread, so this run says nothing about the "
        "program{}; exit 3\n",
        paint("inconclusive", Colour::kRed),
        want_deadlock ? " (the expected deadlock was not seen)" : "");
  } else if (want_deadlock) {
    fmt::print("expectation (deadlock) {}\n", verdict.found_deadlock
                                                  ? paint("holds", Colour::kGreen)
                                                  : paint("does not hold", Colour::kRed));
  }
  const int code = verdict.exit_code;
  std::fflush(stdout);
  std::fflush(stderr);
  if (o.failure && o.failure->hung) std::_Exit(code);
  return code;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// --overhead N: the same drafter steps as plain code and under the scheduler (settle 0, and the
// configured settle), in alternating rounds; medians per step and the overheads.
int run_overhead(LiveArgs a) {
  a.cfg.seq_lens = parse_lengths(a.seq_lens, "--seq-lens");
  if (a.overhead_steps < 5) throw InputError("--overhead needs at least 5 steps");
  live::Options plain;
  plain.control = false;
  plain.hang_timeout = std::chrono::milliseconds(static_cast<long>(a.hang_timeout * 1000));
  live::Options bare = plain;
  bare.control = true;
  bare.settle = std::chrono::milliseconds(0);
  live::Options settled = bare;
  settled.settle = std::chrono::milliseconds(a.settle_ms);
  struct Mode {
    std::string name;
    live::Options opts;
    std::vector<double> times;
  };
  std::vector<Mode> modes = {{"plain code", plain, {}},
                             {"racelab, settle 0 ms", bare, {}},
                             {fmt::format("racelab, settle {} ms", a.settle_ms), settled, {}}};
  const int rounds = 3;
  for (int round = 0; round < rounds; ++round) {
    for (Mode& m : modes) {
      auto t = tw::time_steps(a.cfg, a.overhead_steps, m.opts);
      // The first steps of a run warm caches (allocator, cuBLAS heuristics): not counted.
      if (t.size() > 3) m.times.insert(m.times.end(), t.begin() + 3, t.end());
    }
  }
  const double base = median(modes[0].times);
  nlohmann::ordered_json out;
  out["build"] = tw::build_description();
  out["parameters"] = nlohmann::ordered_json::parse(tw::config_json(a.cfg));
  out["steps_per_run"] = a.overhead_steps;
  out["rounds"] = rounds;
  fmt::print("overhead on {}: 1 drafter, {} steps x {} rounds at L={}, hidden {}, {} attention\n",
             tw::build_description(), a.overhead_steps, rounds, a.cfg.seq_lens.front(),
             a.cfg.hidden, a.cfg.attention);
  for (std::size_t i = 0; i < modes.size(); ++i) {
    const double m = median(modes[i].times);
    const double pct = base > 0 ? (m / base - 1) * 100 : 0;
    fmt::print("  {:<24} median {:9.3f} ms/step{}\n", modes[i].name, m * 1000,
               i == 0 ? std::string() : fmt::format("  ({:+.1f}%)", pct));
    out["modes"][modes[i].name] = {{"median_ms", m * 1000},
                                   {"steps", modes[i].times.size()},
                                   {"overhead_percent", i == 0 ? 0.0 : pct}};
  }
  ensure_directory(a.out);
  write_file_atomic(std::filesystem::path(a.out) / "overhead.json", out.dump(2) + "\n");
  fmt::print("report: {}/overhead.json\n", a.out);
  return kExitOk;
}

live::SearchOptions search_options(const LiveArgs& a) {
  live::SearchOptions o;
  o.strategy = a.strategy;
  o.seed = a.seed;
  o.executions = a.executions;
  o.time_limit = a.time_limit;
  o.hang_timeout = a.hang_timeout;
  o.settle_ms = a.settle_ms;
  o.cycle_confirm_ms = a.cycle_confirm_ms;
  o.expect = a.expect;
  o.replay = a.replay;
  o.out = a.out;
  return o;
}

// Runs executions of `subject` until a failure or the budget (live::search), then reports.
int run_search(const LiveArgs& a, const JobInfo& info, live::Subject& subject,
               sched::Strategy& strategy, bool replaying) {
  const std::string desc = strategy.describe();
  std::fflush(stdout);
  auto progress = count_progress(info.command, "executions");
  const live::Outcome o = live::search(
      search_options(a), info, subject, strategy, replaying, [] { return interrupted().load(); },
      [&](std::uint64_t done, std::uint64_t budget) {
        if (progress) progress(done, budget);
      });
  clear_progress();
  return finish(a, info, o, desc);
}

void check_common(const LiveArgs& a) {
  if (a.expect != "clean" && a.expect != "deadlock")
    throw InputError(fmt::format("--expect must be clean or deadlock, got '{}'", a.expect));
  if (a.hang_timeout <= 0) throw InputError("--hang-timeout must be positive");
  if (a.settle_ms < 0) throw InputError("--settle-ms must not be negative");
  if (a.cycle_confirm_ms <= 0) throw InputError("--cycle-confirm-ms must be positive");
}

std::unique_ptr<sched::Strategy> search_strategy(const LiveArgs& a) {
  sched::StrategyParams sp;
  sp.kind = sched::parse_strategy(a.strategy);
  sp.seed = a.seed;
  sp.depth = a.depth;
  sp.max_preemptions = a.preemptions;
  return sched::make_strategy(sp);
}

// The files' stem of an allocator capture: the script's name.
std::string capture_name(const std::string& script) {
  return std::filesystem::path(script).stem().string();
}

void print_capture(const std::vector<std::string>& lines) {
  for (const auto& l : lines) fmt::print("allocator capture: {}\n", l);
}

// racelab live python --uncontrolled SCRIPT: one plain run (real threads, nothing interposed),
// with --alloc its allocator capture; --time-limit bounds it (a run still going then is a hang).
int run_plain_python(const LiveArgs& a) {
  namespace lp = live::python;
  if (a.script.empty()) throw InputError("live python --uncontrolled: a script is required");
  if (!a.replay.empty() || !a.follow.empty())
    throw InputError("live python --uncontrolled runs the script as it is: no --replay, --follow");
  lp::Job job{a.script, a.script_args, a.interpose, {}, a.dicts, a.locks, a.points, a.blockings};
  if (!a.alloc.empty()) lp::start_alloc_capture(job, a.alloc, capture_name(a.script));
  fmt::print("live python --uncontrolled: {} (real threads{}); {}\n", a.script,
             a.time_limit > 0 ? fmt::format(", time limit {} s", a.time_limit) : "",
             lp::build_description());
  std::fflush(stdout);
  const lp::PlainRun r = lp::run_plain(job, a.time_limit);
  std::string ended = "complete";
  if (!r.finished)
    ended = "hang";
  else if (!r.failures.empty())
    ended = r.failures.front().first;
  if (!a.alloc.empty()) print_capture(lp::finish_alloc_capture(ended));
  nlohmann::ordered_json report;
  report["format"] = "racelab-live-report";
  report["version"] = 1;
  report["racelab_version"] = kVersion;
  report["subject"] = "live-python";
  report["uncontrolled"] = true;
  report["parameters"] = nlohmann::ordered_json::parse(lp::job_json(job));
  report["seconds"] = r.seconds;
  report["finished"] = r.finished;
  report["findings"] = nlohmann::ordered_json::array();
  for (const auto& [kind, message] : r.failures)
    report["findings"].push_back({{"kind", kind}, {"message", message}});
  if (!r.finished) {
    const std::string msg = fmt::format(
        "the script was still running after --time-limit {} s (every thread's Python stack: "
        "{}/stacks.txt)",
        a.time_limit, a.out);
    report["findings"].push_back({{"kind", live::kinds::kHang}, {"message", msg}});
  }
  if (!a.alloc.empty()) report["alloc"] = a.alloc;
  ensure_directory(a.out);
  if (!r.finished) lp::dump_stacks((std::filesystem::path(a.out) / "stacks.txt").string());
  write_file_atomic(std::filesystem::path(a.out) / "report.json", report.dump(2) + "\n");
  for (const auto& f : report["findings"])
    fmt::print("{}: {}\n", paint(f["kind"].get<std::string>(), Colour::kRed),
               f["message"].get<std::string>());
  if (report["findings"].empty())
    fmt::print("{} in {:.2f} s\n", paint("the script finished", Colour::kGreen), r.seconds);
  fmt::print("report: {}/report.json\n", a.out);
  std::fflush(stdout);
  std::fflush(stderr);
  // Not finalized: a hung run's threads are still in the interpreter.
  std::_Exit(report["findings"].empty() ? kExitOk : kExitFound);
}

// racelab live python SCRIPT: the user's script in the embedded interpreter.
int run_python(LiveArgs a) {
  namespace lp = live::python;
  if (a.uncontrolled) return run_plain_python(a);
  check_common(a);
  std::unique_ptr<sched::Strategy> strategy;
  std::optional<sched::Schedule> replay;
  lp::Job job{a.script, a.script_args, a.interpose, {}, a.dicts, a.locks, a.points, a.blockings};
  if (!a.replay.empty()) {
    replay = sched::read_schedule(a.replay);
    if (replay->subject_name != "live-python")
      throw InputError(
          fmt::format("{}: records subject '{}', not live-python", a.replay, replay->subject_name));
    job = lp::job_from_json(replay->parameters.dump());
    a.executions = 1;
    strategy =
        std::make_unique<sched::ReplayStrategy>(replay->steps, sched::OnDivergence::kFail, nullptr);
  } else if (!a.follow.empty()) {
    if (a.script.empty()) throw InputError("live python: --follow needs the script to run");
    const sched::Schedule model = sched::read_schedule(a.follow);
    if (model.subject_name.rfind("live-", 0) == 0)
      throw InputError(fmt::format("{}: a live schedule; replay it with --replay", a.follow));
    const auto table = nlohmann::json::parse(lp::interposition_table(a.interpose));
    if (!table.contains("follow"))
      throw InputError(
          fmt::format("--interpose {}: the table has no \"follow\" section mapping "
                      "model names onto live ones",
                      a.interpose));
    auto steps = lp::follow_steps(model.steps, table["follow"], a.interpose);
    if (steps.empty())
      throw InputError(fmt::format("{}: none of its {} steps maps onto a live operation of {}",
                                   a.follow, model.steps.size(), a.interpose));
    fmt::print("following {} ({} of its {} steps map onto live operations)\n", a.follow,
               steps.size(), model.steps.size());
    strategy = std::make_unique<sched::FollowStrategy>(std::move(steps));
  } else {
    if (a.script.empty()) throw InputError("live python: a script is required (or --replay FILE)");
    strategy = search_strategy(a);
  }
  auto subject = lp::make_subject(job);
  JobInfo info;
  info.subject = "live-python";
  info.command = "live python";
  info.parameters = nlohmann::ordered_json::parse(lp::job_json(job));
  info.build = lp::build_description();
  info.hash = subject->content_hash();
  info.stuck_in = "Python";
  info.on_hang = [](const std::filesystem::path& dir) {
    lp::dump_stacks((dir / "stacks.txt").string());
  };
  fmt::print("live python: {} (interposition {}), {}; {}\n", job.script, job.interpose,
             strategy->describe(), info.build);
  if (!a.alloc.empty()) {
    lp::start_alloc_capture(job, a.alloc, capture_name(job.script));
    info.after_execution = [](std::uint64_t, const std::string& ended) {
      print_capture(lp::finish_alloc_capture(ended));  // the first execution only: once
    };
  }
  lp::arm_crash_report(a.out);
  const int code = run_search(a, info, *subject, *strategy, replay.has_value());
  // The interpreter is not finalized: the script's foreign threads may still be blocked in it.
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(code);
}

int run_torch(LiveArgs a) {
  if (a.rr) return run_under_rr(a);
  if (a.overhead_steps > 0) return run_overhead(a);
  check_common(a);
  std::unique_ptr<sched::Strategy> strategy;
  std::optional<sched::Schedule> replay;
  if (!a.replay.empty()) {
    replay = sched::read_schedule(a.replay);
    if (replay->subject_name != "live-torch")
      throw InputError(
          fmt::format("{}: records subject '{}', not live-torch (replay it with "
                      "racelab replay)",
                      a.replay, replay->subject_name));
    a.cfg = tw::config_from_json(replay->parameters.dump());
    a.executions = 1;
    strategy =
        std::make_unique<sched::ReplayStrategy>(replay->steps, sched::OnDivergence::kFail, nullptr);
  } else {
    a.cfg.seq_lens = parse_lengths(a.seq_lens, "--seq-lens");
    a.cfg.warmup_backward = !a.no_warmup_backward;
    strategy = search_strategy(a);
  }
  std::unique_ptr<live::Subject> subject;
  try {
    subject = tw::make_drafters(a.cfg);  // validates: InputError for bad parameters
  } catch (const InputError& e) {
    if (!replay) throw;
    throw InputError(fmt::format("{}: recorded with {} drafter(s) on {}: {}", a.replay,
                                 a.cfg.drafters, a.cfg.device, e.what()));
  }
  if (replay && !replay->subject_hash.empty() && replay->subject_hash != subject->content_hash())
    fmt::print(stderr,
               "racelab: warning: {} was recorded with another build or workload ({}); replaying "
               "anyway\n",
               a.replay, replay->subject_hash);

  JobInfo info;
  info.subject = "live-torch";
  info.command = "live torch";
  info.parameters = nlohmann::ordered_json::parse(tw::config_json(a.cfg));
  info.build = tw::build_description();
  info.hash = subject->content_hash();
  info.stuck_in = "LibTorch";
  fmt::print("live torch: {} drafter(s) on {}, warmup {}, attention {}, {}; {}\n", a.cfg.drafters,
             a.cfg.device, a.cfg.warmup, a.cfg.attention, strategy->describe(), info.build);
  return run_search(a, info, *subject, *strategy, replay.has_value());
}

struct AllocArgs {
  tw::AllocConfig cfg;
  std::string seq_lens;
  std::string out = "racelab-out/live-alloc";
};

int run_alloc(AllocArgs a) {
  if (!a.seq_lens.empty()) a.cfg.seq_lens = parse_lengths(a.seq_lens, "--seq-lens");
  if (a.cfg.iterations < 1) throw InputError("--iterations must be at least 1");
  if (a.cfg.attention != "fused" && a.cfg.attention != "chunked" && a.cfg.attention != "dense")
    throw InputError(
        fmt::format("--attention must be fused, chunked or dense, got '{}'", a.cfg.attention));
  a.cfg.out = a.out;
  ensure_directory(a.out);
  const tw::AllocOutcome got = tw::capture_alloc(a.cfg);
  fmt::print("{}\n", got.summary);
  fmt::print("trace: {}\nstats: {}\n", got.pickle_path, got.stats_path);
  std::fflush(stdout);
  return alloc_report(got.pickle_path, a.out);
}

}  // namespace

int live_torch_replay(const std::string& schedule, const std::string& out) {
  LiveArgs a;
  a.replay = schedule;
  a.out = out;
  return run_torch(a);
}

int live_python_replay(const std::string& schedule, const std::string& out) {
  LiveArgs a;
  a.replay = schedule;
  a.out = out;
  return run_python(a);
}

// The options every live search shares (live torch, live python).
void add_search_options(CLI::App* cmd, LiveArgs& a) {
  // Checked before conversion, in racelab's words (command.h): "-1" never wraps.
  cmd->add_option("--strategy", a.strategy, sched::live_strategy_names())
      ->capture_default_str()
      ->check(one_of(sched::strategy_name_list(true)));
  cmd->add_option("--seed", a.seed, "seed of random and pct")
      ->capture_default_str()
      ->check(integer_check(0));
  cmd->add_option("--depth", a.depth, "pct depth")
      ->capture_default_str()
      ->check(integer_check(1, 64));
  cmd->add_option("--max-preemptions", a.preemptions, "dfs preemption bound")
      ->capture_default_str()
      ->check(integer_check(0, 64));
  cmd->add_option("--executions", a.executions, "executions to run at most")
      ->capture_default_str()
      ->check(integer_check(1));
  cmd->add_option("--time-limit", a.time_limit, "stop after this many seconds, keeping results")
      ->check(seconds_check());
  cmd->add_option("--hang-timeout", a.hang_timeout,
                  "seconds without progress that make a hang (must exceed the longest compile)")
      ->capture_default_str()
      ->check(seconds_check());
  cmd->add_option("--settle-ms", a.settle_ms,
                  "quiet time granted to foreign threads before each decision")
      ->capture_default_str()
      ->check(integer_check(0, 600000));
  cmd->add_option("--cycle-confirm-ms", a.cycle_confirm_ms,
                  "a wait-for cycle through a blocking call that holds still this long is "
                  "reported as a deadlock without waiting for --hang-timeout")
      ->capture_default_str()
      ->check(integer_check(0, 3600000));
  cmd->add_option("--expect", a.expect,
                  "clean (exit 1 on any deadlock, hang or exception) | deadlock (exit 1 unless "
                  "one is found)")
      ->capture_default_str()
      ->check(one_of({"clean", "deadlock"}));
  cmd->add_option("--replay", a.replay, "run the schedule file once (its parameters apply)");
  cmd->add_option("--out", a.out, "output directory")->capture_default_str();
}

void add_live(CLI::App& app, Runner& run) {
  auto live = app.add_subcommand("live", "run live subjects: real code on real threads");
  live->require_subcommand(1);

  auto t = std::make_shared<LiveArgs>();
  auto* torch = live->add_subcommand(
      "torch", "the LibTorch drafter workload under the scheduler (deadlock search and replay)");
  torch->add_option("--drafters", t->cfg.drafters, "drafter threads")->capture_default_str();
  torch
      ->add_option("--warmup", t->cfg.warmup,
                   "none | sequential | lock_first_step | lock_first_forward | per_thread_lock")
      ->capture_default_str();
  torch->add_flag("--no-warmup-backward", t->no_warmup_backward,
                  "sequential warmup runs the forward only");
  torch->add_option("--warmup-seq-len", t->cfg.warmup_seq_len,
                    "sequential warmup length (default: the first of --seq-lens)");
  torch->add_option("--device", t->cfg.device, "cpu | cuda")->capture_default_str();
  torch->add_option("--gpus", t->cfg.gpus, "cuda: drafter i runs on cuda:(i % gpus)")
      ->capture_default_str();
  torch->add_option("--attention", t->cfg.attention, "dense | chunked | fused")
      ->capture_default_str();
  torch->add_option("--seq-lens", t->seq_lens, "comma-separated lengths, one step each")
      ->capture_default_str();
  torch->add_option("--hidden", t->cfg.hidden, "hidden size")->capture_default_str();
  torch->add_option("--heads", t->cfg.heads, "attention heads")->capture_default_str();
  torch->add_option("--chunk", t->cfg.chunk, "chunked attention: queries per chunk")
      ->capture_default_str();
  add_search_options(torch, *t);
  torch->add_option("--overhead", t->overhead_steps,
                    "measure: N steps of one warmed drafter as plain code and under racelab");
  torch->add_flag("--rr", t->rr,
                  "record the run under rr record --chaos (CPU runs, where rr works; see doctor)");
  torch->callback([&run, t] { run = [t] { return run_torch(*t); }; });

  auto p = std::make_shared<LiveArgs>();
  p->out = "racelab-out/live-python";
  auto* py = live->add_subcommand(
      "python", "a Python script in the embedded interpreter, its threads under the scheduler");
  py->add_option("script", p->script, "the script, run as __main__ (not with --replay)");
  py->add_option("args", p->script_args, "the script's arguments (after --)");
  py->add_option("--interpose", p->interpose,
                 "interposition table: torch-2.11, standin, none, or a JSON file "
                 "(data/interpose/)")
      ->capture_default_str();
  py->add_option("--dict", p->dicts,
                 "MODULE.ATTR: a dict cache of compiled wrappers whose lookups and inserts are "
                 "scheduling points (repeatable; added to the table)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->allow_extra_args(false);
  py->add_option("--lock", p->locks,
                 "MODULE.ATTR: a lock to replace with racelab's re-entrant lock (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->allow_extra_args(false);
  py->add_option("--point", p->points,
                 "MODULE.FUNC: a function whose entry is a scheduling point (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->allow_extra_args(false);
  py->add_option("--blocking", p->blockings,
                 "MODULE.FUNC[=SERVED_BY]: a call that waits for a thread racelab does not "
                 "control, served by the thread so named (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->allow_extra_args(false);
  add_search_options(py, *p);
  py->add_option("--follow", p->follow,
                 "force a model schedule (racelab explore's) on the live run, through the "
                 "table's \"follow\" mapping of thread and operation names");
  py->add_option("--alloc", p->alloc,
                 "DIR: record the CUDA caching allocator's history of the (first) execution on "
                 "every device, iterations at optimizer steps or racelab.iteration(); writes "
                 "snap_<script>.cuda<k>.pickle and stats_<script>.cuda<k>.json for alloc report");
  py->add_flag("--uncontrolled", p->uncontrolled,
               "run the script once as plain Python would (real threads, nothing interposed; "
               "--time-limit bounds it), e.g. to capture its allocator trace");
  py->callback([&run, p] { run = [p] { return run_python(*p); }; });

  auto al = std::make_shared<AllocArgs>();
  auto* alloc = live->add_subcommand(
      "alloc", "record the CUDA caching allocator's history of the drafter step (CUDA builds)");
  alloc->add_option("--attention", al->cfg.attention, "fused | chunked | dense")
      ->capture_default_str();
  alloc->add_option("--iterations", al->cfg.iterations, "training iterations")
      ->capture_default_str();
  alloc->add_option("--seq-lens", al->seq_lens,
                    "comma-separated lengths, cycled (default: random 512..4096 by 64, as the "
                    "fixtures)");
  alloc->add_option("--seed", al->cfg.seed, "seed of the random lengths")->capture_default_str();
  alloc->add_option("--hidden", al->cfg.hidden, "hidden size")->capture_default_str();
  alloc->add_option("--heads", al->cfg.heads, "attention heads")->capture_default_str();
  alloc->add_option("--chunk", al->cfg.chunk, "chunked attention: queries per chunk")
      ->capture_default_str();
  alloc->add_option("--name", al->cfg.name, "file name stem (default live_<attention>_<seed>)");
  alloc->add_option("--out", al->out, "output directory")->capture_default_str();
  alloc->callback([&run, al] { run = [al] { return run_alloc(*al); }; });
}

}  // namespace racelab::cli
