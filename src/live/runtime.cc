// The live runtime's engine (see live.h): run(), the real world its decisions are made in (a
// Runtime::Impl::World for sched::decide_loop, the one decision loop of model and live subjects),
// the wind-down that unwinds parked threads and keeps stuck ones alive, and the results. The state
// it drives is Runtime::Impl (runtime_impl.h); the threads' side of each step is in
// runtime_threads.cc.
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

std::vector<sched::ReplayStep> Result::replay_steps() const {
  std::vector<sched::ReplayStep> out;
  for (const Event& e : events)
    if (e.decision) out.push_back({e.thread, e.text});
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

// The real world of sched::decide_loop (decide.h): the runtime's threads, with state_mutex held
// through `lk` except while it waits. Its waits are where a live decision differs from a
// simulated one: the running thread must come back to a scheduling point, and threads racelab
// does not control (foreign threads, threads inside blocking calls) must settle or change the
// world before a choice is made.
class Runtime::Impl::World {
 public:
  World(Runtime::Impl& rt, sched::Strategy& strategy, std::unique_lock<std::mutex>& lk)
      : rt_(rt), strategy_(strategy), lk_(lk) {}

  bool hung() const { return hung_; }

  // 1. The running thread comes back to a scheduling point, goes away or finishes. 2. The world
  // is quiescent (Impl::quiescent): every thread inside a blocking call has come back or waits,
  // through its server, on an instrumented mutex, and no foreign thread is inside a critical
  // section of one. That is a fact about the threads, not about time, so the same schedule
  // prefix meets the same enabled threads however loaded the machine is; the hang timeout is the
  // only clock. Where a call's server waits while the call's thread is still inside it, the call
  // may have been served already (racelab cannot see its thread on the way back): there, and only
  // there, a quiet period of `settle` is granted, and counted (Result::settled). 3. The program's
  // end: every non-daemon thread has finished; the daemon threads left are stopped where they
  // are, as the interpreter's exit stops them (live.h).
  bool ready() {
    if (!wait_activity([&] { return rt_.running() < 0 || rt_.fatal; }))
      return hang(rt_.options.hang_timeout);
    if (rt_.fatal) return false;
    for (;;) {
      bool server_blocked = false;
      if (!wait_activity([&] {
            return rt_.fatal || rt_.non_daemons_finished() || rt_.quiescent(server_blocked);
          }))
        return hang(rt_.options.hang_timeout);
      if (rt_.fatal) return false;
      if (!server_blocked || rt_.options.settle.count() <= 0 || rt_.non_daemons_finished()) break;
      const std::uint64_t seen = rt_.activity;
      if (!rt_.engine_cv.wait_for(lk_, rt_.options.settle,
                                  [&] { return rt_.activity != seen || rt_.fatal; })) {
        ++rt_.result.settled;
        break;
      }
    }
    if (rt_.non_daemons_finished()) {
      for (int c : rt_.controlled)
        if (rt_.agents[c].state != State::kFinished)
          rt_.record(c, "stopped at exit (daemon thread)", false);
      return false;
    }
    return true;
  }

  const std::vector<ThreadId>& enabled() {
    enabled_.clear();
    for (ThreadId t = 0; t < static_cast<ThreadId>(rt_.controlled.size()); ++t)
      if (is_enabled(t)) enabled_.push_back(t);
    return enabled_;
  }
  bool is_enabled(ThreadId t) const { return rt_.enabled(rt_.controlled[t]); }

  // No controlled thread can run. A deadlock unless a foreign thread could still wake one
  // (report_stuck: then a hang). When only something outside the engine's control can move, a
  // wait-for cycle through it that holds still for cycle_confirm is a deadlock; otherwise wait
  // up to hang_timeout for it to move, and look again.
  bool none_enabled() {
    if (!rt_.can_change()) {
      rt_.report_stuck(
          "no thread can run, and only a thread racelab does not control could wake one", true);
      return false;
    }
    const std::uint64_t seen = rt_.activity;
    const std::vector<int> found = rt_.find_cycle();
    if (rt_.certain_cycle(found, false)) return hang(std::chrono::milliseconds(0));
    const bool cycle = !found.empty();
    const auto patience = cycle ? std::min(rt_.options.cycle_confirm, rt_.options.hang_timeout)
                                : rt_.options.hang_timeout;
    return rt_.engine_cv.wait_for(lk_, patience, [&] {
      return rt_.activity != seen || rt_.fatal;
    }) || hang(patience);
  }

  // A replayed step whose thread waits for a mutex a foreign thread holds, or for a thread that
  // is away: wait for the world to catch up rather than diverge.
  bool await(const sched::Decision& d) {
    const sched::Guided* guided = strategy_.guided();
    if (guided == nullptr || !guided->awaited(d) || !rt_.can_change()) return false;
    const std::uint64_t seen = rt_.activity;
    return rt_.engine_cv.wait_for(lk_, rt_.options.hang_timeout,
                                  [&] { return rt_.activity != seen || rt_.fatal; });
  }

  void livelock(std::string message) {
    rt_.result.findings.push_back(sched::Finding{sched::kinds::kLivelock,
                                                 std::move(message),
                                                 static_cast<std::int64_t>(rt_.decisions),
                                                 {},
                                                 {}});
  }

  bool take(ThreadId t) {
    rt_.apply(rt_.controlled[t]);
    ++rt_.decisions;
    return true;
  }

 private:
  // Nothing happened for `quiet`: the execution hangs (report_stuck says how), and ends.
  template <class Duration>
  bool hang(Duration quiet) {
    rt_.report_stuck(
        fmt::format("no progress for {:.1f} s", std::chrono::duration<double>(quiet).count()));
    hung_ = true;
    return false;
  }
  // Waits until until_done() holds; false when nothing at all happened for hang_timeout.
  template <class Pred>
  bool wait_activity(Pred until_done) {
    rt_.spin(lk_, until_done);
    while (!until_done()) {
      const std::uint64_t seen = rt_.activity;
      if (!rt_.engine_cv.wait_for(lk_, rt_.options.hang_timeout,
                                  [&] { return until_done() || rt_.activity != seen; }))
        return false;
    }
    return true;
  }

  Runtime::Impl& rt_;
  sched::Strategy& strategy_;
  std::unique_lock<std::mutex>& lk_;
  std::vector<ThreadId> enabled_;
  bool hung_ = false;
};

bool Runtime::Impl::decide_until_end(sched::Strategy& strategy, const Runtime& view,
                                     std::unique_lock<std::mutex>& lk) {
  World world(*this, strategy, lk);
  // Only dpor abandons an execution (kNoThread: sleep-set blocked), and only with footprints; the
  // threads parked then unwind as at the end of any execution (wind_down).
  try {
    sched::decide_execution(world, strategy, options.max_steps, view, options.footprints, result);
  } catch (const sched::Nondeterminism& e) {
    report_nondeterminism(e);
  }
  // The threads as the last decision left them, for the strategy's end_execution (dpor's blocked
  // threads), which runs after they wound down.
  finals.clear();
  for (int c : controlled) {
    Final& f = finals.emplace_back(Final{agents[c].state == State::kFinished, agents[c].op, {}});
    const Agent& a = agents[c];
    if (options.footprints && a.state == State::kAtPoint && a.pending.kind == OpKind::kPoint &&
        a.pending.guard >= 0 && !enabled(c))
      point_touches(a.pending.accesses, f.blocked);
  }
  decided = true;
  return world.hung();
}

bool Runtime::Impl::wind_down(bool hung, bool failed) {
  std::unique_lock lk(state_mutex);
  aborting = true;
  woke();
  for (int c : controlled) agents[c].cv.notify_all();
  mutex_cv.notify_all();  // the uncontrolled baseline's daemon threads wait there
  if (!hung) {
    // The threads parked at scheduling points unwind at once; a thread inside a real call comes
    // back when its call returns. Those of a wait-for cycle never do: an execution dpor abandoned
    // (sleep-set blocked) after a drafter holding compile_lock went into _engine_run_backward
    // while the worker waited for that lock. A cycle that holds still for cycle_confirm is
    // stuck, as in a decision (World::none_enabled); anything else gets hang_timeout.
    // A cycle nothing can break (certain_cycle) is stuck at once.
    const auto deadline = SteadyClock::now() + options.hang_timeout;
    bool certain = false;
    while (!all_finished()) {
      const std::uint64_t seen = activity;
      auto until = deadline;
      if (options.control) {
        const std::vector<int> cycle = find_cycle();
        if (certain_cycle(cycle, true)) {
          hung = certain = true;
          break;
        }
        if (!cycle.empty()) until = std::min(deadline, SteadyClock::now() + options.cycle_confirm);
      }
      if (!engine_cv.wait_until(lk, until, [&] { return all_finished() || activity != seen; })) {
        hung = true;
        break;
      }
    }
    // Stuck without a finding of its own (an abandoned execution, or one that ended at an
    // exception): the threads left stuck are the program's deadlock or hang, and they hold what
    // the next execution would need (a device's worker), so the process cannot run another
    // execution from the program's state (issue 34). Say so: the search then ends this process's
    // part (live/search.h), as for any execution that hung.
    if (hung && !fatal && options.control) {
      stuck_at_end = true;
      const bool cycle = !find_cycle().empty();
      const auto waited = certain ? std::chrono::milliseconds(0)
                          : cycle ? std::min(options.cycle_confirm, options.hang_timeout)
                                  : options.hang_timeout;
      report_stuck(fmt::format("still stuck {:.1f} s after the execution ended",
                               std::chrono::duration<double>(waited).count()));
    }
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
  impl.index = index;
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

  bool nondeterministic = false;
  {
    std::lock_guard g(impl.state_mutex);
    for (const sched::Finding& f : impl.result.findings)
      nondeterministic = nondeterministic || f.kind == sched::kinds::kNondeterministic;
  }
  if (hung || nondeterministic) {
    subject.stuck();  // every thread's stack, before anything unwinds
    std::lock_guard g(impl.state_mutex);
    impl.result.stacks = true;
  }
  // Wind down: parked threads unwind from their scheduling point; threads in real calls cannot.
  hung = impl.wind_down(hung, error != nullptr);
  if (impl.stuck_at_end) {
    subject.stuck();  // the stacks of the threads that did not unwind
    std::lock_guard g(impl.state_mutex);
    impl.result.stacks = true;
  }
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
