// The printing of a live run, shared by racelab live torch | python and racelab replay of a live
// schedule (live_print.h): the banner, then run::run_job (src/run/live_job.h: the search, its
// files, when the process must end), then its verdict. Not a subcommand.
#include "live_print.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "command.h"
#include "live/search.h"
#include "live/split.h"
#include "report/live_report.h"
#include "report/schedule_paths.h"
#include "sched/kinds.h"
#include "sched/loop.h"
#include "sched/strategies/strategies.h"

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

// A Python exception's traceback under its finding: the user's frames, most recent last (at most
// eight; report.json's "stack" has every frame).
void print_traceback(const std::vector<sched::StackFrame>& stack) {
  std::vector<const sched::StackFrame*> user;
  for (const auto& fr : stack)
    if (fr.user) user.push_back(&fr);
  if (user.empty()) return;
  constexpr std::size_t kShown = 8;
  const std::size_t from = user.size() > kShown ? user.size() - kShown : 0;
  fmt::print("  traceback (the script's frames, most recent call last):\n");
  if (from > 0) fmt::print("    ... {} earlier frame(s)\n", from);
  for (std::size_t i = from; i < user.size(); ++i)
    fmt::print("    {}:{} in {}\n", user[i]->file, user[i]->line, user[i]->function);
}

// A failing execution's failures (and racelab losing control), each with its details and
// traceback; `stacks`: the stacks.txt that holds a lost thread's Python stack ("" none).
void print_failures(const live::Result& r, std::uint64_t execution, const std::string& stacks) {
  for (const auto& f : r.findings) {
    if (!is_failure(f.kind) && !sched::kinds::is_inconclusive(f.kind)) continue;
    fmt::print("{} (execution {}, {} decisions): {}\n", paint(f.kind, Colour::kRed), execution,
               r.choices.size(), f.message);
    for (const auto& d : f.details) fmt::print("  {}\n", d);
    print_traceback(f.stack);
    if (f.kind == sched::kinds::kLostControl && !stacks.empty()) {
      const std::string stack = thread_stack(stacks, lost_thread(f));
      if (!stack.empty())
        fmt::print(
            "  its Python stack (innermost last; the C function it waits in is below "
            "the last frame):\n{}",
            stack);
    }
  }
}

int print_verdict(const live::SearchOptions& so, const live::JobInfo& info,
                  const run::JobRun& run) {
  const live::Outcome& o = run.outcome;
  const std::string& schedule = run.schedule;
  const std::string& strategy_desc = run.strategy_desc;
  const live::StopAtFailure& kept = o.kept;
  const results::Verdict& verdict = run.verdict;
  using results::Why;
  // What was found (facts, for the clean line); the verdict's frame comes from verdict.why.
  bool found = false;
  if (kept.failure)
    for (const auto& f : kept.failure->findings)
      found = found || is_failure(f.kind) || sched::kinds::is_inconclusive(f.kind);
  found = found || !run.found.empty();
  if (kept.failure) {
    print_failures(*kept.failure, kept.failure_execution,
                   (std::filesystem::path(so.out) / "stacks.txt").string());
    if (!schedule.empty())
      fmt::print(
          "  replay: {}{}\n", report::replay_command(schedule, info.command),
          kept.failure->hung
              ? fmt::format(" (the process exits now: threads are stuck in {})", info.stuck_in)
              : "");
  }
  for (const auto& [kind, n] : kept.kinds) {
    if (!is_failure(kind)) fmt::print("{}: seen in {} of {} execution(s)\n", kind, n, o.executions);
  }
  // --all-findings: the kinds this process found (the earlier processes printed theirs), then
  // every kind of the search with its schedule.
  for (const auto& [execution, r] : kept.found) print_failures(r, execution, "");
  if (!run.handover && so.all_findings && !run.found.empty()) {
    fmt::print("kinds found ({} in all):\n", run.found.size());
    for (const live::Found& f : run.found)
      fmt::print("  {} (execution {}): racelab {} --replay {}\n", paint(f.kind, Colour::kRed),
                 f.execution, info.command, f.schedule);
  }
  if (kept.other) {
    const auto f = worst_failure(*kept.other);
    fmt::print("{} (execution {}, searched past it): {}\n  replay: {}\n",
               paint(f->kind, Colour::kRed), kept.other_execution, f->message,
               report::replay_command(run.other_schedule, info.command));
    for (const auto& [kind, n] : kept.kinds)
      if (is_failure(kind) && kind != sched::kinds::kDeadlock && kind != live::kinds::kHang)
        fmt::print("{}: seen in {} of {} execution(s)\n", kind, n, o.executions);
  }
  const bool cut_short = verdict.why == Why::kCutShort;
  if (verdict.why == Why::kScheduleEnded) {
    fmt::print("{}\n", paint(verdict.reason, Colour::kRed));
  } else if (!found) {
    fmt::print("{}\n", paint(cut_short ? "no deadlock, hang or exception so far"
                                       : "no deadlock, hang or exception",
                             cut_short ? Colour::kYellow : Colour::kGreen));
    // What a clean verdict does not cover (report.json's not_checked says the same).
    if (info.subject == sched::kLivePythonSubject) fmt::print("{}\n", report::kPythonNotChecked);
    if (sched::strategy_info(so.strategy).proves_every_order && so.replay.empty())
      fmt::print("{}\n", report::live_proof_covers(info.subject));
  }
  print_stopped_early(o.interrupted(), o.time_limit());
  fmt::print("{}; {:.2f} s on {}\n", live::coverage_brief(so, o, strategy_desc), o.seconds,
             info.build);
  if (so.replay.empty())
    fmt::print("{}\n", sched::coverage_line(o.coverage.summary(), live::samples(so)));
  if (kept.settled > 0)
    fmt::print(
        "settle: {} decision(s) also waited {} ms of quiet for a thread inside a blocking call "
        "whose server waited (--settle-ms): there, and only there, a result may depend on the "
        "machine's speed\n",
        kept.settled, so.settle_ms);
  fmt::print("report: {}/report.json, {}/trace.txt\n", so.out, so.out);
  const bool want_deadlock = so.expect == results::LiveExpect::kDeadlock;
  if (cut_short) {
    fmt::print("{}; exit 1\n", paint(verdict.reason, Colour::kYellow));
  } else if (verdict.why == Why::kNondeterministic) {
    fmt::print(
        "{}: the program took another path under the same schedule prefix (nondeterministic, "
        "above), so this search proves nothing about it{}; exit 1\n",
        paint("inconclusive", Colour::kRed),
        want_deadlock ? " (the expected deadlock was not seen)" : "");
  } else if (verdict.why == Why::kLostControl) {
    fmt::print(
        "{}: racelab lost control of a thread, so this run says nothing about the "
        "program{}; exit 3\n",
        paint("inconclusive", Colour::kRed),
        want_deadlock ? " (the expected deadlock was not seen)" : "");
  } else if (verdict.why == Why::kUnfinished) {
    fmt::print("expectation (deadlock) {}; exit 1\n", paint(verdict.reason, Colour::kYellow));
  } else if (want_deadlock) {
    const bool found_deadlock =
        (kept.failure && kept.failure->found(sched::kinds::kDeadlock)) ||
        std::any_of(run.found.begin(), run.found.end(),
                    [](const live::Found& f) { return f.kind == sched::kinds::kDeadlock; });
    fmt::print("expectation (deadlock) {}\n", found_deadlock
                                                  ? paint("holds", Colour::kGreen)
                                                  : paint("does not hold", Colour::kRed));
  }
  return run.exit_code;
}

}  // namespace

int print_run(const live::SearchOptions& so, live::Job& job,
              const std::function<void()>& after_banner) {
  if (!so.split_worker.empty()) {  // a worker of a --jobs search (live/split.h): no verdict
    if (job.arm) job.arm(so.split_worker);
    const int code = live::split_worker(so, job.info, *job.run.subject);
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(code);
  }
  print_replay_warning(job.run.warning);
  fmt::print("{}\n", job.banner);
  if (so.carried)
    fmt::print("going on with the search in a fresh process (its process {}) from execution {}\n",
               so.carried->processes + 1, so.carried->tally.executions);
  // A torch or Python outside the table's verified range: one line, before any result.
  if (!job.info.outside_verified.empty())
    fmt::print("{}\n", paint("warning: " + job.info.outside_verified, Colour::kYellow));
  if (after_banner) after_banner();
  std::fflush(stdout);
  auto progress = count_progress(job.info.command, "executions");
  const run::JobRun run = run::run_job(
      so, job, [] { return interrupted().load(); },
      [&](std::uint64_t done, std::uint64_t budget) {
        if (progress) progress(done, budget);
      });
  clear_progress();
  if (run.handover) {  // --all-findings past a deadlock: on in a fresh process (live/handover.h)
    for (const auto& [execution, r] : run.outcome.kept.found) print_failures(r, execution, "");
    const std::string path = live::handover_path(so.out).string();
    live::write_handover(path, *run.handover);
    fmt::print("searching on in a fresh process from execution {} (threads are stuck in {}): {}\n",
               run.outcome.executions, job.info.stuck_in, path);
    std::fflush(stdout);
    std::fflush(stderr);
    const std::string error = live::continue_in_fresh_process(path);
    throw std::runtime_error("--all-findings: could not start a fresh process: " + error);
  }
  const int code = print_verdict(so, job.info, run);
  if (run.end_process) {
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(code);
  }
  return code;
}

}  // namespace racelab::cli::livecmd
