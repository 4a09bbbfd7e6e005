#include "live/search.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "sched/kinds.h"
#include "sched/loop.h"
#include "sched/strategies/strategies.h"
#include "util/check.h"
#include "util/clock.h"
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
  return fmt::format("{} was recorded with {} ({}); replaying anyway", path,
                     replay.schedule.subject_name == sched::kLivePythonSubject
                         ? "another script, interposition table or options"
                         : "another build or workload",
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
  p.recorded = {r.schedule.finding_kind, r.schedule.steps.size(), r.schedule.subject_hash};
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

LiveRunner::LiveRunner(Subject& subject, const Options& options, std::string replay,
                       std::function<void(std::uint64_t, const std::string&)> after_execution,
                       std::string divergence_hint)
    : subject_(subject),
      options_(options),
      replay_(std::move(replay)),
      after_execution_(std::move(after_execution)),
      divergence_hint_(std::move(divergence_hint)) {}

std::string divergence_hint(const Recorded& recorded, const std::string& subject,
                            const std::string& hash) {
  if (!recorded.hash.empty() && recorded.hash != hash)
    return fmt::format(
        "{} changed since recording, content hash {} now {}: that change is the likely cause; "
        "record a new schedule",
        subject == sched::kLivePythonSubject ? "the script, its interposition table or its options"
                                             : "the build or the workload",
        recorded.hash, hash);
  return "the program is as recorded, and a live run also depends on foreign threads' timing; "
         "try a larger --settle-ms";
}

std::optional<Result> LiveRunner::run(sched::Strategy& strategy, std::uint64_t execution) const {
  std::optional<Result> r;
  try {
    r = live::run(subject_, strategy, execution, options_);
  } catch (const sched::ReplayDivergence& e) {
    throw InputError(fmt::format("{}: {} ({})", replay_, e.what(), divergence_hint_));
  }
  if (r && after_execution_) {
    const auto worst = worst_failure(*r);
    after_execution_(execution, worst != r->findings.end() ? worst->kind : "complete");
  }
  return r;
}

bool StopAtFailure::keep(std::uint64_t execution, Result& r) {
  settled += r.settled;
  std::set<std::string> seen;
  for (const auto& f : r.findings) seen.insert(f.kind);
  for (const auto& k : seen) ++kinds[k];
  const bool lost = std::any_of(seen.begin(), seen.end(), sched::kinds::is_inconclusive);
  const bool failed = lost || std::any_of(seen.begin(), seen.end(), is_failure);
  if (all_findings_ && !replaying_ && failed && !lost) {
    const std::string kind = worst_failure(r)->kind;
    const bool hung = r.hung;
    if (known_.insert(kind).second) found.emplace_back(execution, std::move(r));
    hand_over = hung;
    return !hung;
  }
  if (failed && !replaying_ && expect_deadlock_ && !seen.count(sched::kinds::kDeadlock) &&
      !r.hung) {
    if (!other) {
      other = std::move(r);
      other_execution = execution;
    }
    return true;
  }
  if (failed || replaying_) {
    failure = std::move(r);
    failure_execution = execution;
    if (failed) stopped_at_failure = true;
    return !failed;
  }
  last = std::move(r);
  return true;
}

void StopAtFailure::finish() {
  if (failure || !other) return;
  failure = std::move(other);
  failure_execution = other_execution;
  other.reset();
}

Outcome search(const SearchOptions& a, const JobInfo& info, Subject& subject,
               sched::Strategy& strategy, bool replaying, const std::function<bool()>& stop,
               const std::function<void(std::uint64_t, std::uint64_t)>& progress) {
  const Options lo = runtime_options(a, replaying);
  const LiveRunner runner(subject, lo, a.replay, info.after_execution,
                          divergence_hint(a.recorded, info.subject, info.hash));
  // Going on from earlier processes: their counts, kinds and time.
  const Handover none;
  const Handover& before = a.carried ? *a.carried : none;
  std::set<std::string> known;
  for (const Found& f : before.found) known.insert(f.kind);
  StopAtFailure keep(a.expect == results::LiveExpect::kDeadlock, replaying, a.all_findings,
                     std::move(known));
  keep.kinds = before.kinds;
  keep.settled = before.settled;
  double time_limit = a.time_limit;
  if (time_limit > 0)
    time_limit = std::max(time_limit - time_so_far(a, 0, util::process_seconds()), 1e-3);
  const sched::Budget budget(a.executions, time_limit, stop);
  Outcome o = sched::explore_executions(
      runner, std::move(keep), strategy, budget, !replaying && !samples(a),
      [&](const Outcome& so_far) {
        if (progress) progress(so_far.executions, a.executions);
      },
      before.tally);
  o.seconds += before.seconds;
  o.kept.finish();
  return o;
}

Options runtime_options(const SearchOptions& a, bool replaying) {
  Options lo;
  lo.hang_timeout = std::chrono::milliseconds(static_cast<long>(a.hang_timeout * 1000));
  lo.settle = std::chrono::milliseconds(a.settle_ms);
  lo.cycle_confirm = std::chrono::milliseconds(a.cycle_confirm_ms);
  lo.footprints = !replaying && sched::strategy_info(a.strategy).needs_footprints;
  return lo;
}

double time_so_far(const SearchOptions& a, double search_seconds, double process_seconds) {
  return a.carried ? a.carried->wall_seconds + process_seconds : search_seconds;
}

std::optional<Handover> next_process(const SearchOptions& a, const JobInfo& info,
                                     sched::Strategy& strategy, Outcome& o,
                                     std::vector<Found> found, bool stopped) {
  if (!o.kept.hand_over) return std::nullopt;
  sched::Resumable* resumable = strategy.resumable();
  std::optional<std::string> state =
      resumable != nullptr ? resumable->hand_over() : std::optional<std::string>();
  RACELAB_CHECK(state.has_value(), "live::next_process: {} cannot hand its search over",
                strategy.describe());
  if (strategy.exhausted()) {
    o.stop = sched::StopReason::kExhausted;
    return std::nullopt;
  }
  if (stopped) {
    o.stop = sched::StopReason::kInterrupted;
    return std::nullopt;
  }
  if (o.executions >= a.executions) return std::nullopt;  // kBudget: cut short
  const double wall = time_so_far(a, o.seconds, util::process_seconds());
  if (a.time_limit > 0 && wall >= a.time_limit) {
    o.stop = sched::StopReason::kTimeLimit;
    return std::nullopt;
  }
  Handover h;
  h.strategy = std::move(*state);
  h.hash = info.hash;
  h.processes = a.carried ? a.carried->processes + 1 : 1;
  h.tally = o;
  h.seconds = o.seconds;
  h.wall_seconds = wall;
  h.kinds = o.kept.kinds;
  h.settled = o.kept.settled;
  h.found = std::move(found);
  return h;
}

results::Verdict judge(const SearchOptions& a, const Outcome& o) {
  results::SearchFacts f;
  // --all-findings: every kind found, in this process and the earlier ones.
  if (a.carried)
    for (const Found& x : a.carried->found) f.found.push_back(x.kind);
  for (const auto& [execution, r] : o.kept.found) f.found.push_back(worst_failure(r)->kind);
  f.failure_found = !f.found.empty();
  if (o.kept.failure) {
    for (const auto& finding : o.kept.failure->findings) {
      f.failure_found = f.failure_found || is_failure(finding.kind);
      f.lost_control = f.lost_control || sched::kinds::is_inconclusive(finding.kind);
    }
    if (o.kept.failure->found(sched::kinds::kDeadlock)) f.found.push_back(sched::kinds::kDeadlock);
    f.nondeterministic = o.kept.failure->found(sched::kinds::kNondeterministic);
  }
  if (a.replay.empty()) {
    const sched::StrategyKind kind = a.strategy;
    f.strategy = sched::strategy_name(a.strategy);
    f.stop = o.stop;
    f.executions = o.executions;
    f.cap = a.executions;
    f.proves = sched::strategy_proves(kind);
    f.bounded = sched::strategy_info(kind).bounded;
    f.stopped_at_failure = o.kept.stopped_at_failure;
  }
  // A replay whose steps all matched, that went past the last one without its recorded kind.
  const Result* replayed = o.kept.failure ? &*o.kept.failure : nullptr;
  if (!a.replay.empty() && !a.recorded.kind.empty() && replayed != nullptr &&
      !replayed->found(a.recorded.kind) && replayed->choices.size() > a.recorded.steps)
    f.schedule_ended = fmt::format(
        "diverged: the schedule ended at step {} before its recorded {} happened (every step "
        "matched; the execution went on for {} more decisions without it): the file was cut "
        "short or edited; record it again",
        a.recorded.steps, a.recorded.kind, replayed->choices.size() - a.recorded.steps);
  return results::judge(results::expectations_for(a.expect), f, std::nullopt,
                        results::live_wording());
}

int exit_code(const results::Verdict& v) {
  if (v.passed()) return kExitOk;
  return v.why == results::Why::kLostControl ? kExitInternal : kExitFound;
}

bool samples(const SearchOptions& a) { return !sched::strategy_proves(a.strategy); }

std::string coverage_brief(const SearchOptions& a, const Outcome& o, const std::string& desc) {
  if (!a.replay.empty()) return fmt::format("replayed {} ({} execution)", a.replay, o.executions);
  if (o.kept.stopped_at_failure)
    return fmt::format("{} executions ({}), stopped at the first failure", o.executions, desc);
  const sched::StrategyKind kind = a.strategy;
  return sched::coverage_sentence({.strategy = desc,
                                   .executions = o.executions,
                                   .cap = a.executions,
                                   .stop = o.stop,
                                   .proves = sched::strategy_proves(kind),
                                   .bounded = sched::strategy_info(kind).bounded});
}

}  // namespace racelab::live
