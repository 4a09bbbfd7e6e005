// The live family's option helpers (live.h): racelab live torch | python's options into the
// search's (src/live/search.h), their range checks, the replayed schedule and the search
// strategy. Not a subcommand.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <thread>

#include "live.h"
#include "report/schedule_file.h"
#include "sched/strategies/strategies.h"
#include "util/errors.h"

namespace racelab::cli::livecmd {

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
  o.all_findings = a.all_findings;
  o.carried = a.carried;
  o.jobs = a.jobs;
  o.split_worker = a.split_worker;
  return o;
}

void check_common(LiveArgs& a) {
  if (a.hang_timeout <= 0) throw InputError("--hang-timeout must be positive");
  if (a.settle_ms < 0) throw InputError("--settle-ms must not be negative");
  if (a.cycle_confirm_ms <= 0) throw InputError("--cycle-confirm-ms must be positive");
  if (a.all_findings) {
    // Past a deadlock the search goes on in a fresh process, which takes the search's state over:
    // only a resumable row's (its table, src/sched/strategies/factory.cc) can be.
    if (!sched::strategy_info(a.strategy).resumable) {
      std::vector<std::string> resumable;
      for (const sched::StrategyInfo& info : sched::strategy_table())
        if (info.resumable) resumable.emplace_back(info.name);
      const std::string names = fmt::format("{}", fmt::join(resumable, " | "));
      throw InputError(fmt::format(
          "--all-findings needs --strategy {} (past a deadlock the search goes on in a fresh "
          "process, and only {}'s search can be handed over)",
          names, names));
    }
    if (!a.replay.empty() || !a.follow.empty())
      throw InputError("--all-findings searches: not with --replay or --follow");
  }
  if (a.jobs == 0) a.jobs = std::max(1U, std::thread::hardware_concurrency());
  if (a.jobs > 1) {
    // The subtrees of dpor's tree are what the processes share (live/split.h).
    if (!sched::strategy_info(a.strategy).resumable)
      throw InputError(
          fmt::format("--jobs {} needs --strategy dpor (the processes run the "
                      "executions of its search ahead)",
                      a.jobs));
    if (!a.replay.empty() || a.all_findings || !a.follow.empty())
      throw InputError(fmt::format("--jobs {}: not with {} (one process runs it)", a.jobs,
                                   a.all_findings     ? "--all-findings"
                                   : a.follow.empty() ? "--replay"
                                                      : "--follow"));
  }
  if (!a.continue_from.empty()) {
    if (!a.all_findings)
      throw InputError("--continue-from goes on with an --all-findings search: give both");
    a.carried = std::make_shared<const live::Handover>(live::read_handover(a.continue_from));
  }
}

std::optional<sched::Schedule> recorded_schedule(const std::string& replay) {
  if (replay.empty()) return std::nullopt;
  return report::read_schedule(replay);
}

std::unique_ptr<sched::Strategy> search_strategy(const LiveArgs& a) {
  sched::StrategyParams sp;
  sp.kind = a.strategy;
  sp.seed = a.seed;
  sp.depth = a.depth;
  sp.max_preemptions = a.preemptions;
  std::unique_ptr<sched::Strategy> s = sched::make_strategy(sp);
  if (a.carried && (s->resumable() == nullptr || !s->resumable()->take_over(a.carried->strategy)))
    throw InputError(
        fmt::format("{}: {} cannot take a search over", a.continue_from, s->describe()));
  return s;
}

}  // namespace racelab::cli::livecmd
