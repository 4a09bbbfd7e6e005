#include "live/search.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "sched/kinds.h"
#include "sched/loop.h"
#include "sched/strategies/strategies.h"
#include "util/check.h"
#include "util/errors.h"

namespace racelab::live {

Replay open_replay(sched::Schedule schedule, const std::string& path, const std::string& subject) {
  Replay r{std::move(schedule), nullptr};
  if (r.schedule.subject_name != subject)
    throw InputError(fmt::format("{}: records subject '{}', not {} (replay it with racelab replay)",
                                 path, r.schedule.subject_name, subject));
  r.strategy = std::make_unique<sched::ReplayStrategy>(r.schedule.steps, sched::OnDivergence::kFail,
                                                       nullptr);
  return r;
}

std::string replay_hash_warning(const Replay& replay, const std::string& path,
                                const std::string& hash) {
  const std::string& recorded = replay.schedule.subject_hash;
  if (recorded.empty() || recorded == hash) return "";
  return fmt::format("{} was recorded with another build or workload ({}); replaying anyway", path,
                     recorded);
}

Prepared prepare(const std::string& replay, std::optional<sched::Schedule> recorded,
                 const std::string& subject_name,
                 const std::function<std::unique_ptr<sched::Strategy>()>& search,
                 const std::function<std::unique_ptr<Subject>(const sched::Schedule*)>& make) {
  Prepared p;
  if (replay.empty()) {
    p.strategy = search();
    p.subject = make(nullptr);
    return p;
  }
  RACELAB_CHECK(recorded.has_value(), "live::prepare: replaying {} without its schedule", replay);
  Replay r = open_replay(std::move(*recorded), replay, subject_name);
  p.replaying = true;
  p.strategy = std::move(r.strategy);
  p.subject = make(&r.schedule);
  p.warning = replay_hash_warning(r, replay, p.subject->content_hash());
  return p;
}

bool is_failure(const std::string& kind) { return sched::kinds::is_failure(kind); }

// The failure (or lost control) of an execution that comes first in report order.
std::vector<sched::Finding>::const_iterator worst_failure(const Result& r) {
  auto best = r.findings.end();
  for (auto it = r.findings.begin(); it != r.findings.end(); ++it) {
    if (!is_failure(it->kind) && !sched::kinds::is_inconclusive(it->kind)) continue;
    if (best == r.findings.end() || sched::kinds::before(it->kind, best->kind)) best = it;
  }
  return best;
}

Outcome search(const SearchOptions& a, const JobInfo& info, Subject& subject,
               sched::Strategy& strategy, bool replaying, const std::function<bool()>& stop,
               const std::function<void(std::uint64_t, std::uint64_t)>& progress) {
  Options lo;
  lo.hang_timeout = std::chrono::milliseconds(static_cast<long>(a.hang_timeout * 1000));
  lo.settle = std::chrono::milliseconds(a.settle_ms);
  lo.cycle_confirm = std::chrono::milliseconds(a.cycle_confirm_ms);
  Outcome o;
  const sched::Budget budget(a.executions, a.time_limit, stop);
  const bool proves = !replaying && !samples(a);
  auto run_one = [&](std::uint64_t i) {
    try {
      return run(subject, strategy, i, lo);
    } catch (const sched::ReplayDivergence& e) {
      throw InputError(
          fmt::format("{}: {} (a live run also depends on foreign threads' timing; "
                      "try a larger --settle-ms)",
                      a.replay, e.what()));
    }
  };
  auto after = [&](std::uint64_t i, Result& r) {
    ++o.executions;
    o.coverage.add(handoff_fingerprint(r));
    if (info.after_execution) {
      const auto worst = worst_failure(r);
      info.after_execution(i, worst != r.findings.end() ? worst->kind : "complete");
    }
    std::set<std::string> seen;
    for (const auto& f : r.findings) seen.insert(f.kind);
    for (const auto& k : seen) ++o.kinds[k];
    if (progress) progress(o.executions, a.executions);
    const bool lost = std::any_of(seen.begin(), seen.end(), sched::kinds::is_inconclusive);
    const bool failed = lost || std::any_of(seen.begin(), seen.end(), is_failure);
    // Searching for a deadlock: another failure is kept (the first) and the search goes on, unless
    // threads were left stuck in real calls (a hang, racelab losing control): then the process
    // must end, and that execution is the result. A hang is never the deadlock asked for.
    if (failed && !replaying && a.expect == "deadlock" && !seen.count(sched::kinds::kDeadlock) &&
        !r.hung) {
      if (!o.other) {
        o.other = std::move(r);
        o.other_execution = i;
      }
      return true;
    }
    if (failed || replaying) {
      o.failure = std::move(r);
      o.failure_execution = i;
      if (failed) {
        o.stopped_at_failure = true;
        return false;
      }
    } else {
      o.last = std::move(r);
    }
    return true;
  };
  if (const auto why = sched::run_loop(budget, strategy, proves, run_one, after)) o.stop = *why;
  if (!o.failure && o.other) {  // no deadlock: the other failure is the result
    o.failure = std::move(o.other);
    o.failure_execution = o.other_execution;
    o.other.reset();
  }
  o.seconds = budget.elapsed();
  return o;
}

Judgement judge(const SearchOptions& a, const Outcome& o) {
  Judgement j;
  if (o.failure) {
    for (const auto& f : o.failure->findings) {
      j.failed = j.failed || is_failure(f.kind);
      j.inconclusive = j.inconclusive || sched::kinds::is_inconclusive(f.kind);
    }
    j.found_deadlock = o.failure->found(sched::kinds::kDeadlock);
  }
  // A dfs search asked to show the program clean proves nothing until it covers its space.
  j.cut_short = !j.failed && !j.inconclusive && a.replay.empty() && a.expect == "clean" &&
                sched::absence_cut_short(!samples(a), o.stop);
  if (j.inconclusive)
    j.exit_code = kExitInternal;
  else if (j.cut_short)
    j.exit_code = kExitFound;
  else if (a.expect == "deadlock")
    j.exit_code = j.found_deadlock ? kExitOk : kExitFound;
  else
    j.exit_code = j.failed ? kExitFound : kExitOk;
  return j;
}

bool samples(const SearchOptions& a) {
  return !sched::strategy_proves(sched::parse_strategy(a.strategy));
}

std::string coverage_brief(const SearchOptions& a, const Outcome& o, const std::string& desc) {
  if (!a.replay.empty()) return fmt::format("replayed {} ({} execution)", a.replay, o.executions);
  if (o.stopped_at_failure)
    return fmt::format("{} executions ({}), stopped at the first failure", o.executions, desc);
  const sched::StrategyKind kind = sched::parse_strategy(a.strategy);
  return sched::coverage_sentence({.strategy = desc,
                                   .executions = o.executions,
                                   .cap = a.executions,
                                   .stop = o.stop,
                                   .proves = sched::strategy_proves(kind),
                                   .bounded = sched::strategy_info(kind).bounded});
}

}  // namespace racelab::live
