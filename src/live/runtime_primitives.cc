// The instrumented primitives of live.h as both kinds of thread meet them: Mutex, SharedVar,
// point(), Blocking, name_this_thread(), spawn() and join(). On a controlled thread each operation
// parks at a scheduling point (Runtime::Impl::park) until the engine applies it; on a foreign
// thread it takes effect at once (a mutex is really taken, waiting if it is held) and is recorded
// as an event.
#include <fmt/format.h>

#include <exception>
#include <stdexcept>

#include "live/runtime_impl.h"
#include "sched/kinds.h"
#include "sched/op.h"
#include "util/check.h"

namespace racelab::live {

using internal::Aborted;
using internal::clock_join;
using internal::g_active;
using internal::g_serial;
using internal::Pending;
using internal::State;
using internal::tl_agent;
using internal::tl_rt;
using sched::OpKind;

// ---- Primitives.

bool Mutex::locked() const {
  Runtime::Impl& impl = *rt_->impl_;
  std::lock_guard lk(impl.state_mutex);
  return impl.mutexes[id_].owner >= 0;
}

void Mutex::lock_waiting_for(std::string waits_for) {
  Runtime::Impl& impl = *rt_->impl_;
  std::unique_lock lk(impl.state_mutex);
  if (tl_rt == rt_ && tl_agent >= 0) {
    impl.park(lk, tl_agent, Pending{OpKind::kLock, id_, std::move(waits_for)});
    return;
  }
  const int f = impl.foreign_self();
  auto& mx = impl.mutexes[id_];
  if (!impl.can_take(mx, f)) {
    Runtime::Impl::Agent& a = impl.agents[f];
    a.waiting_mutex = id_;
    impl.set_state(a, State::kWaiting);
    impl.record(f, "waits for " + name_, false);
    impl.bump();
    impl.mutex_cv.wait(lk, [&] { return impl.can_take(mx, f); });
    a.waiting_mutex = -1;
    impl.set_state(a, State::kFree);
  }
  mx.owner = f;
  ++mx.depth;
  clock_join(impl.agents[f].clock, mx.clock);
  impl.record(f, sched::op_text(OpKind::kLock, name_), false,
              Runtime::Impl::resource_key("mutex", name_), true);
  impl.note_foreign_mutex(f, id_, sched::TouchMutex::kAcquire);
  impl.bump();
}

bool Mutex::try_lock() {
  Runtime::Impl& impl = *rt_->impl_;
  std::unique_lock lk(impl.state_mutex);
  if (tl_rt == rt_ && tl_agent >= 0) {
    const int me = tl_agent;
    impl.park(lk, me, Pending{OpKind::kTryLock, id_, {}});
    return impl.agents[me].took;
  }
  const int f = impl.foreign_self();
  auto& mx = impl.mutexes[id_];
  if (!impl.can_take(mx, f)) {
    impl.record(f, sched::op_text(OpKind::kTryLock, name_) + " (busy)", false,
                Runtime::Impl::resource_key("mutex", name_), false);
    impl.note_foreign_mutex(f, id_, sched::TouchMutex::kBusy);
    impl.bump();
    return false;
  }
  mx.owner = f;
  ++mx.depth;
  clock_join(impl.agents[f].clock, mx.clock);
  impl.record(f, sched::op_text(OpKind::kLock, name_), false,
              Runtime::Impl::resource_key("mutex", name_), true);
  impl.note_foreign_mutex(f, id_, sched::TouchMutex::kAcquire);
  impl.bump();
  return true;
}

void Mutex::unlock() {
  Runtime::Impl& impl = *rt_->impl_;
  std::unique_lock lk(impl.state_mutex);
  auto& mx = impl.mutexes[id_];
  // A Python lock may be released by any thread; releasing it unheld is the bridge's error.
  const bool by_anyone = python_lock_ && mx.owner >= 0;
  if (tl_rt == rt_ && tl_agent >= 0) {
    if (mx.owner != tl_agent && !by_anyone) {
      // Unwinding an execution that is over (a `with` block's release after its acquire was cut
      // short) is not the program's error.
      if (impl.aborting) return;
      impl.result.findings.push_back(sched::Finding{
          sched::kinds::kAssertion,
          fmt::format("{} unlocked {}, which it does not hold", impl.agents[tl_agent].name, name_),
          static_cast<std::int64_t>(impl.decisions),
          {},
          {}});
      impl.fatal = true;
      return;
    }
    // Unlock is called from destructors (std::lock_guard): once the execution is over it releases
    // at once instead of throwing.
    if (impl.aborting || std::uncaught_exceptions() > 0 || !impl.options.control) {
      impl.release_mutex(tl_agent, id_);
      return;
    }
    try {
      impl.park(lk, tl_agent, Pending{OpKind::kUnlock, id_, {}});
    } catch (const Aborted&) {
      impl.release_mutex(tl_agent, id_);
    }
    return;
  }
  const int f = impl.foreign_self();
  if (mx.owner != f && !by_anyone) {
    impl.result.findings.push_back(sched::Finding{
        sched::kinds::kAssertion,
        fmt::format("{} unlocked {}, which it does not hold", impl.agents[f].name, name_),
        static_cast<std::int64_t>(impl.decisions),
        {},
        {}});
    return;
  }
  if (python_lock_) impl.foreign_released_python_lock = true;
  impl.release_mutex(f, id_);
  impl.record(f, sched::op_text(OpKind::kUnlock, name_), false,
              Runtime::Impl::resource_key("mutex", name_), true);
  impl.note_foreign_mutex(f, id_, sched::TouchMutex::kRelease);
  impl.bump();
}

void SharedVar::access(bool write, const std::function<void()>& touch) {
  Runtime::Impl& impl = *rt_->impl_;
  std::unique_lock lk(impl.state_mutex);
  if (tl_rt == rt_ && tl_agent >= 0) {
    impl.park(lk, tl_agent, Pending{write ? OpKind::kWrite : OpKind::kRead, id_, {}});
  } else if (tl_rt == rt_) {
    // The engine thread, in setup (before every thread starts) or finish (after all ended).
  } else {
    const int f = impl.foreign_self();
    impl.check_access(f, impl.vars[id_], write);
    impl.record(f, sched::op_text(write ? OpKind::kWrite : OpKind::kRead, name_), false,
                Runtime::Impl::resource_key("var", name_), write);
    impl.note_foreign(f, id_, write);
    impl.bump();
  }
  touch();
}

void point(std::string_view label, std::vector<PointAccess> accesses) {
  if (tl_rt != nullptr && tl_agent >= 0) {
    Runtime::Impl& impl = *tl_rt->impl_;
    std::unique_lock lk(impl.state_mutex);
    impl.park(lk, tl_agent, Pending{OpKind::kPoint, -1, std::string(label), std::move(accesses)});
    return;
  }
  Runtime* rt = g_active.load();
  if (rt == nullptr) return;
  Runtime::Impl& impl = *rt->impl_;
  std::lock_guard lk(impl.state_mutex);
  const int f = impl.foreign_self();
  impl.record(f, sched::op_text(OpKind::kPoint, label), false);
  impl.note_foreign(f, -1, true, &accesses);
  impl.bump();
}

void point(std::string_view label, std::vector<PointAccess> accesses, Guard guard) {
  if (tl_rt != nullptr && tl_agent >= 0) {
    Runtime::Impl& impl = *tl_rt->impl_;
    std::unique_lock lk(impl.state_mutex);
    Pending p{OpKind::kPoint, -1, std::string(label), std::move(accesses)};
    p.guard = impl.counter_id(guard.counter);
    p.at_least = guard.at_least;
    p.waits_for = std::move(guard.waits_for);
    impl.park(lk, tl_agent, std::move(p));
    return;
  }
  point(label, std::move(accesses));  // a foreign thread: recorded (it waits by its own means)
}

void count(std::string_view counter, std::int64_t delta) {
  Runtime* rt = tl_rt != nullptr ? tl_rt : g_active.load();
  if (rt == nullptr) return;
  Runtime::Impl& impl = *rt->impl_;
  std::lock_guard lk(impl.state_mutex);
  impl.counters[static_cast<std::size_t>(impl.counter_id(counter))] += delta;
  if (tl_rt == nullptr || tl_agent < 0) impl.bump();  // a foreign thread may enable a point
}

void touch(std::string_view object, bool write, bool awaited) {
  Runtime* rt = tl_rt != nullptr ? tl_rt : g_active.load();
  if (rt == nullptr) return;
  Runtime::Impl& impl = *rt->impl_;
  std::lock_guard lk(impl.state_mutex);
  impl.note_touch(object, write, awaited);
}

Blocking::Blocking(std::string what, std::string served_by) : rt_(tl_rt), id_(tl_agent) {
  if (rt_ == nullptr || id_ < 0) {
    rt_ = nullptr;
    return;
  }
  Runtime::Impl& impl = *rt_->impl_;
  if (!impl.options.control) {
    rt_ = nullptr;
    return;
  }
  std::lock_guard lk(impl.state_mutex);
  Runtime::Impl::Agent& a = impl.agents[id_];
  impl.record(id_, "call " + what, false);
  if (!served_by.empty()) impl.note_call(served_by);
  a.away.emplace_back(std::move(what), std::move(served_by));
  impl.set_state(a, State::kAway);
  impl.bump();
}

Blocking::~Blocking() {
  if (rt_ == nullptr) return;
  Runtime::Impl& impl = *rt_->impl_;
  std::unique_lock lk(impl.state_mutex);
  Runtime::Impl::Agent& a = impl.agents[id_];
  if (impl.aborting || std::uncaught_exceptions() > 0) {
    if (!a.away.empty()) a.away.pop_back();
    return;
  }
  try {
    impl.park(lk, id_, Pending{OpKind::kReturn, -1, a.away.back().first});
  } catch (const Aborted&) {
    // The execution ended while this thread was inside the call; it stops at its next operation.
  }
}

void name_this_thread(std::string name) {
  Runtime* rt = g_active.load();
  if (rt == nullptr || (tl_rt == rt && tl_agent >= 0)) return;
  Runtime::Impl& impl = *rt->impl_;
  std::lock_guard lk(impl.state_mutex);
  impl.agents[impl.foreign_self()].name = std::move(name);
}

bool controlled() { return tl_rt != nullptr && tl_agent >= 0 && g_active.load() == tl_rt; }

ThreadId spawn(std::string name, std::function<void()> body, bool daemon) {
  Runtime* rt = tl_rt != nullptr ? tl_rt : g_active.load();
  RACELAB_CHECK(rt != nullptr,
                "live::spawn of thread {} outside a live execution: threads are spawned from a "
                "subject's setup or from a controlled thread (live.h)",
                name);
  return rt->spawn(std::move(name), std::move(body), daemon);
}

void join(ThreadId t) {
  RACELAB_CHECK(tl_rt != nullptr && tl_agent >= 0,
                "live::join of controlled thread {} from {}: only a controlled thread joins one", t,
                tl_rt == nullptr ? "a thread outside any live execution" : "a foreign thread");
  Runtime::Impl& impl = *tl_rt->impl_;
  std::unique_lock lk(impl.state_mutex);
  impl.park(lk, tl_agent, Pending{OpKind::kJoin, t, {}});
}

Runtime* active_runtime() { return g_active.load(); }

std::uint64_t execution_serial() { return g_active.load() != nullptr ? g_serial.load() : 0; }

bool stopping() {
  Runtime* rt = tl_rt != nullptr ? tl_rt : g_active.load();
  if (rt == nullptr) return true;
  std::lock_guard lk(rt->impl_->state_mutex);
  return rt->impl_->aborting;
}

}  // namespace racelab::live
