// The live search's printer, shared by racelab live torch | python and racelab replay of a live
// schedule: runs a prepared live job (src/live/job.h) through the search and prints its verdict
// (the search, its policy and its files are src/live/search.h). Not a subcommand.
#include "live_search.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "command.h"
#include "live.h"
#include "report/live_report.h"
#include "report/schedule_file.h"
#include "sched/kinds.h"
#include "sched/loop.h"
#include "sched/strategies/strategies.h"
#include "util/errors.h"

namespace racelab::cli::livecmd {

using live::is_failure;
using live::worst_failure;
using report::lost_thread;
using report::thread_stack;

namespace {

// The replayed schedule's warning (live::Prepared::warning) on stderr, if any.
void print_replay_warning(const std::string& warning) {
  if (!warning.empty()) fmt::print(stderr, "racelab: warning: {}\n", warning);
}

int finish(const live::SearchOptions& so, const JobInfo& info, const Outcome& o,
           const std::string& strategy_desc) {
  const std::string schedule = report::write_outputs(so, info, o, strategy_desc);
  const live::StopAtFailure& kept = o.kept;
  const live::Judgement verdict = live::judge(so, o);
  const bool failed = verdict.failed;
  const bool inconclusive = verdict.inconclusive;
  if (kept.failure) {
    for (const auto& f : kept.failure->findings) {
      if (!is_failure(f.kind) && !sched::kinds::is_inconclusive(f.kind)) continue;
      fmt::print("{} (execution {}, {} decisions): {}\n", paint(f.kind, Colour::kRed),
                 kept.failure_execution, kept.failure->choices.size(), f.message);
      for (const auto& d : f.details) fmt::print("  {}\n", d);
      if (f.kind == sched::kinds::kLostControl) {
        const std::string stack =
            thread_stack(std::filesystem::path(so.out) / "stacks.txt", lost_thread(f));
        if (!stack.empty())
          fmt::print(
              "  its Python stack (innermost last; the C function it waits in is below "
              "the last frame):\n{}",
              stack);
      }
    }
    if (!schedule.empty())
      fmt::print(
          "  replay: racelab {} --replay {}{}\n", info.command, schedule,
          kept.failure->hung
              ? fmt::format(" (the process exits now: threads are stuck in {})", info.stuck_in)
              : "");
  }
  for (const auto& [kind, n] : kept.kinds) {
    if (!is_failure(kind)) fmt::print("{}: seen in {} of {} execution(s)\n", kind, n, o.executions);
  }
  if (kept.other) {
    const auto f = worst_failure(*kept.other);
    fmt::print(
        "{} (execution {}, searched past it): {}\n  replay: racelab {} --replay "
        "{}/schedule-{}.json\n",
        paint(f->kind, Colour::kRed), kept.other_execution, f->message, info.command, so.out,
        f->kind);
    for (const auto& [kind, n] : kept.kinds)
      if (is_failure(kind) && kind != sched::kinds::kDeadlock && kind != live::kinds::kHang)
        fmt::print("{}: seen in {} of {} execution(s)\n", kind, n, o.executions);
  }
  if (!failed && !inconclusive)
    fmt::print("{}\n", paint(verdict.cut_short ? "no deadlock, hang or exception so far"
                                               : "no deadlock, hang or exception",
                             verdict.cut_short ? Colour::kYellow : Colour::kGreen));
  print_stopped_early(o.interrupted(), o.time_limit());
  fmt::print("{}; {:.2f} s on {}\n", live::coverage_brief(so, o, strategy_desc), o.seconds,
             info.build);
  if (so.replay.empty())
    fmt::print("{}\n", sched::coverage_line(o.coverage.summary(), live::samples(so)));
  fmt::print("report: {}/report.json, {}/trace.txt\n", so.out, so.out);
  const bool want_deadlock = so.expect == "deadlock";
  if (verdict.cut_short) {
    fmt::print("{}; exit 1\n",
               paint(sched::cut_short_sentence(
                         so.strategy, o.stop, o.executions,
                         sched::strategy_info(sched::parse_strategy(so.strategy)).bounded,
                         "the program's absence of a deadlock, hang or exception",
                         "raise --executions, or lower --max-preemptions"),
                     Colour::kYellow));
  } else if (inconclusive) {
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
  if (kept.failure && kept.failure->hung) std::_Exit(code);
  return code;
}

}  // namespace

live::SearchOptions search_options(const LiveArgs& a) {
  live::SearchOptions o;
  o.strategy = a.strategy;
  o.seed = a.seed;
  o.executions = a.replay.empty() ? a.executions : 1;  // a replay runs its schedule once
  o.time_limit = a.time_limit;
  o.hang_timeout = a.hang_timeout;
  o.settle_ms = a.settle_ms;
  o.cycle_confirm_ms = a.cycle_confirm_ms;
  o.expect = a.expect;
  o.replay = a.replay;
  o.out = a.out;
  return o;
}

int run_job(const live::SearchOptions& so, live::Job& job,
            const std::function<void()>& after_banner) {
  print_replay_warning(job.run.warning);
  fmt::print("{}\n", job.banner);
  if (after_banner) after_banner();
  if (job.arm) job.arm(so.out);
  const std::string desc = job.run.strategy->describe();
  std::fflush(stdout);
  auto progress = count_progress(job.info.command, "executions");
  const live::Outcome o = live::search(
      so, job.info, *job.run.subject, *job.run.strategy, job.run.replaying,
      [] { return interrupted().load(); },
      [&](std::uint64_t done, std::uint64_t budget) {
        if (progress) progress(done, budget);
      });
  clear_progress();
  const int code = finish(so, job.info, o, desc);
  if (job.exit_process) {
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(code);
  }
  return code;
}

void check_common(const LiveArgs& a) {
  if (a.expect != "clean" && a.expect != "deadlock")
    throw InputError(fmt::format("--expect must be clean or deadlock, got '{}'", a.expect));
  if (a.hang_timeout <= 0) throw InputError("--hang-timeout must be positive");
  if (a.settle_ms < 0) throw InputError("--settle-ms must not be negative");
  if (a.cycle_confirm_ms <= 0) throw InputError("--cycle-confirm-ms must be positive");
}

std::optional<sched::Schedule> recorded_schedule(const std::string& replay) {
  if (replay.empty()) return std::nullopt;
  return report::read_schedule(replay);
}

std::unique_ptr<sched::Strategy> search_strategy(const LiveArgs& a) {
  sched::StrategyParams sp;
  sp.kind = sched::parse_strategy(a.strategy);
  sp.seed = a.seed;
  sp.depth = a.depth;
  sp.max_preemptions = a.preemptions;
  return sched::make_strategy(sp);
}

}  // namespace racelab::cli::livecmd
