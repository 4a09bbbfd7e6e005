// The live runtime's engine (see live.h): run() and its decision loop, the wind-down that unwinds
// parked threads and keeps stuck ones alive, and the results. The state it drives is
// Runtime::Impl (runtime_impl.h); the threads' side of each step is in runtime_threads.cc.
//
// One decision: wait for the running thread to come back to a scheduling point (or finish, or go
// away into a blocking call), let foreign threads settle, collect the enabled threads, and let the
// strategy pick one, whose pending operation is then applied. The execution ends when every
// non-daemon thread has finished (daemon threads are stopped), or when no thread is enabled: a
// deadlock or a hang (runtime_stuck.cc says which).
#include <fmt/format.h>

#include <algorithm>
#include <exception>

#include "live/runtime_impl.h"
#include "sched/coverage.h"
#include "sched/decide.h"
#include "sched/kinds.h"
#include "util/check.h"

namespace racelab::live {

namespace internal {

thread_local constinit Runtime* tl_rt = nullptr;
thread_local constinit int tl_agent = -1;
std::atomic<Runtime*> g_active{nullptr};
std::atomic<std::uint64_t> g_serial{0};
std::mutex g_graveyard_mutex;
std::vector<std::shared_ptr<Runtime>> g_graveyard;

}  // namespace internal

using internal::g_active;
using internal::g_graveyard;
using internal::g_graveyard_mutex;
using internal::g_serial;
using internal::State;
using internal::SteadyClock;
using internal::tl_agent;
using internal::tl_rt;

bool Result::found(std::string_view kind) const {
  return std::any_of(findings.begin(), findings.end(),
                     [&](const sched::Finding& f) { return f.kind == kind; });
}

std::vector<std::pair<std::string, std::string>> Result::decisions() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Event& e : events)
    if (e.decision) out.emplace_back(e.thread, e.text);
  return out;
}

std::uint64_t handoff_fingerprint(const Result& r) {
  std::vector<sched::Access> accesses;
  accesses.reserve(r.events.size());
  for (const Event& e : r.events) {
    if (e.resource != 0) accesses.push_back({e.resource, fnv1a64(e.thread), e.write});
  }
  return sched::handoff_fingerprint(std::move(accesses));
}

bool Runtime::Impl::decide_until_end(sched::Strategy& strategy, const Runtime& view,
                                     std::unique_lock<std::mutex>& lk) {
  sched::Decider decider(strategy, options.max_steps);
  std::vector<ThreadId> enabled_threads;
  auto wait_activity = [&](auto until_done) {
    // Waits until until_done() holds; false when nothing at all happened for hang_timeout.
    spin(lk, until_done);
    while (!until_done()) {
      const std::uint64_t seen = activity;
      if (!engine_cv.wait_for(lk, options.hang_timeout,
                              [&] { return until_done() || activity != seen; }))
        return false;
    }
    return true;
  };
  for (;;) {
    // 1. The running thread comes back to a scheduling point, goes away or finishes.
    if (!wait_activity([&] { return running() < 0 || fatal; })) {
      report_stuck(fmt::format("no progress for {:.1f} s",
                               std::chrono::duration<double>(options.hang_timeout).count()));
      return true;
    }
    if (fatal) return false;
    // 2. Let foreign threads and threads inside blocking calls reach their next operation: while
    // a thread is away or a foreign thread holds or waits for a mutex, wait until nothing has
    // happened for `settle`.
    {
      const auto settle_end = SteadyClock::now() + options.hang_timeout;
      while (foreign_busy() && SteadyClock::now() < settle_end) {
        const std::uint64_t seen = activity;
        engine_cv.wait_for(lk, options.settle, [&] { return activity != seen; });
        if (activity == seen) break;
      }
    }
    // 3. The program's end: every non-daemon thread has finished. The daemon threads left are
    // stopped where they are, as the interpreter's exit stops them (live.h).
    if (non_daemons_finished()) {
      for (int c : controlled)
        if (agents[c].state != State::kFinished)
          record(c, "stopped at exit (daemon thread)", false);
      return false;
    }
    // 4. Choose.
    enabled_threads.clear();
    for (ThreadId t = 0; t < static_cast<ThreadId>(controlled.size()); ++t)
      if (enabled(controlled[t])) enabled_threads.push_back(t);
    if (enabled_threads.empty()) {
      if (!can_change()) {
        // A deadlock unless a foreign thread could still wake one (report_stuck): then a hang.
        report_stuck("no thread can run, and only a thread racelab does not control could wake one",
                     true);
        return false;
      }
      // Only something outside the engine's control can move now. A wait-for cycle through it
      // that holds still for cycle_confirm is a deadlock; otherwise wait up to hang_timeout.
      const std::uint64_t seen = activity;
      const bool cycle = !find_cycle().empty();
      const auto patience =
          cycle ? std::min(options.cycle_confirm, options.hang_timeout) : options.hang_timeout;
      if (!engine_cv.wait_for(lk, patience, [&] { return activity != seen || fatal; })) {
        report_stuck(fmt::format("no progress for {:.1f} s",
                                 std::chrono::duration<double>(patience).count()));
        return true;
      }
      continue;
    }
    const ThreadId previous = decider.previous();
    const sched::Decision d = decider.decision(
        enabled_threads, previous != sched::kNoThread && enabled(controlled[previous]), decisions,
        view);
    // A replayed step whose thread waits for a mutex a foreign thread holds, or for a thread
    // that is away: wait for the world to catch up rather than diverge.
    if (strategy.awaited(d) && can_change()) {
      const std::uint64_t seen = activity;
      if (engine_cv.wait_for(lk, options.hang_timeout, [&] { return activity != seen || fatal; }))
        continue;
    }
    if (auto livelock = decider.over_step_limit(decisions)) {
      result.findings.push_back(sched::Finding{
          sched::kinds::kLivelock, *livelock, static_cast<std::int64_t>(decisions), {}, {}});
      return false;
    }
    // A live execution cannot be abandoned (kNoThread): only model subjects record what dpor needs.
    const ThreadId t = decider.pick(d, false);
    result.preemptions = decider.preemptions();
    result.choices.push_back(t);
    apply(controlled[t]);
    ++decisions;
  }
}

bool Runtime::Impl::wind_down(bool hung, bool failed) {
  std::unique_lock lk(state_mutex);
  aborting = true;
  woke();
  for (int c : controlled) agents[c].cv.notify_all();
  mutex_cv.notify_all();  // the uncontrolled baseline's daemon threads wait there
  if (!hung) {
    const bool all = engine_cv.wait_for(lk, options.hang_timeout, [&] {
      for (int c : controlled) {
        if (agents[c].state != State::kFinished) return false;
      }
      return true;
    });
    hung = !all;
  }
  if (hung) {
    for (int c : controlled)
      if (agents[c].os.joinable()) agents[c].os.detach();
  }
  result.hung = hung;
  result.completed =
      !hung && !fatal && !failed && all_finished() &&
      std::none_of(result.findings.begin(), result.findings.end(), [](const sched::Finding& f) {
        return f.kind == sched::kinds::kDeadlock || f.kind == kinds::kHang ||
               f.kind == kinds::kLostControl || f.kind == sched::kinds::kLivelock;
      });
  return hung;
}

bool wait_hung_threads(std::chrono::milliseconds timeout) {
  std::vector<std::shared_ptr<Runtime>> rts;
  {
    std::lock_guard g(g_graveyard_mutex);
    rts = g_graveyard;
  }
  const auto end = SteadyClock::now() + timeout;
  for (auto& rt : rts) {
    Runtime::Impl& impl = *rt->impl_;
    std::unique_lock lk(impl.state_mutex);
    if (!impl.engine_cv.wait_until(lk, end, [&] { return impl.all_finished(); })) return false;
  }
  return true;
}

std::optional<Result> run(Subject& subject, sched::Strategy& strategy, std::uint64_t index,
                          const Options& options) {
  if (!strategy.begin_execution(index)) return std::nullopt;
  std::shared_ptr<Runtime> rt(new Runtime(options));
  Runtime::Impl& impl = *rt->impl_;
  Runtime* expected = nullptr;
  const bool alone = g_active.compare_exchange_strong(expected, rt.get());
  RACELAB_CHECK(alone,
                "live::run of execution {} of {} under {} while another is running: one "
                "live execution at a time in a process (live.h)",
                index, subject.name(), strategy.describe());
  ++g_serial;
  Runtime* const outer_rt = tl_rt;
  const int outer_agent = tl_agent;
  tl_rt = rt.get();
  tl_agent = -1;

  bool hung = false;
  std::exception_ptr error;
  try {
    subject.setup(*rt);
    std::unique_lock lk(impl.state_mutex);
    if (options.control) {
      hung = impl.decide_until_end(strategy, *rt, lk);
    } else {
      // The baseline: the threads run as plain code; wait for them to end.
      impl.engine_cv.wait(lk, [&] { return impl.non_daemons_finished() || impl.fatal; });
    }
  } catch (...) {
    error = std::current_exception();
  }

  if (hung) subject.stuck();  // before anything unwinds
  // Wind down: parked threads unwind from their scheduling point; threads in real calls cannot.
  hung = impl.wind_down(hung, error != nullptr);
  if (!hung) {
    for (int c : impl.controlled)
      if (impl.agents[c].os.joinable()) impl.agents[c].os.join();
  }
  if (!error && impl.result.completed) {
    try {
      subject.finish(*rt);  // on the engine thread, which still counts as the runtime's own
    } catch (...) {
      error = std::current_exception();
    }
  }
  g_active.store(nullptr);
  tl_rt = outer_rt;
  tl_agent = outer_agent;
  if (hung) {
    std::lock_guard g(g_graveyard_mutex);
    g_graveyard.push_back(rt);
  }
  strategy.end_execution();
  if (error) std::rethrow_exception(error);

  std::lock_guard lk(impl.state_mutex);
  Result out = std::move(impl.result);
  out.seconds = impl.seconds();
  for (int c : impl.controlled) out.threads.push_back(impl.agents[c].name);
  for (const Runtime::Impl::Agent& a : impl.agents)
    if (a.foreign) out.foreign.push_back(a.name);
  return out;
}

}  // namespace racelab::live
