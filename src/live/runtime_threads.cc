// Thread and primitive bookkeeping of the live runtime: registering agents (controlled and
// foreign threads), the text of pending operations, applying an operation the engine chose,
// parking a controlled thread at a scheduling point, and the Runtime members that create threads
// and primitives (see runtime_impl.h for the state, runtime.cc for the engine that drives it).
#include <fmt/format.h>

#include <exception>

#include "live/runtime_impl.h"
#include "sched/kinds.h"
#include "util/text.h"

namespace racelab::live {

using internal::Aborted;
using internal::clock_at;
using internal::clock_join;
using internal::Pending;
using internal::State;
using internal::tl_agent;
using internal::tl_rt;
using sched::OpKind;

// ---- Agents and operations.

int Runtime::Impl::add_agent(std::string name, bool foreign) {
  const int id = static_cast<int>(agents.size());
  Agent& a = agents.emplace_back();
  a.name = std::move(name);
  a.foreign = foreign;
  a.since = SteadyClock::now();
  a.state = foreign ? State::kFree : State::kAtPoint;
  a.clock.assign(id + 1, 0);
  a.clock[id] = 1;
  if (!foreign) {
    a.id = static_cast<ThreadId>(controlled.size());
    controlled.push_back(id);
  }
  return id;
}

int Runtime::Impl::foreign_self() {
  const auto os = std::this_thread::get_id();
  auto it = foreign_by_os.find(os);
  if (it != foreign_by_os.end()) return it->second;
  const int id = add_agent(fmt::format("foreign thread {}", foreign_by_os.size() + 1), true);
  foreign_by_os.emplace(os, id);
  return id;
}

std::string Runtime::Impl::op_text(const Pending& p) const {
  switch (p.kind) {
    case OpKind::kLock:
    case OpKind::kTryLock:
    case OpKind::kUnlock:
      return sched::op_text(p.kind, mutexes[p.object].obj->name());
    case OpKind::kRead:
    case OpKind::kWrite:
      return sched::op_text(p.kind, vars[p.object].obj->name());
    case OpKind::kJoin:
      return sched::op_text(p.kind, agents[controlled[p.object]].name);
    case OpKind::kStart:
    case OpKind::kPoint:
    case OpKind::kReturn:
      return sched::op_text(p.kind, p.label);
    default:
      break;  // the model's events, jobs and queues have no live counterpart
  }
  return "?";
}

void Runtime::Impl::release_mutex(int agent, int id) {
  MutexState& mx = mutexes[id];
  if (mx.depth <= 0) return;  // a Python lock released twice by two threads at once
  if (--mx.depth == 0) {
    mx.owner = -1;
    clock_join(mx.clock, agents[agent].clock);
    tick(agent);
    mutex_cv.notify_all();
  }
}

void Runtime::Impl::check_access(int agent, VarState& v, bool write) {
  const VClock& mine = agents[agent].clock;
  const auto now_event = static_cast<std::int64_t>(result.events.size());
  sched::record_access(
      v.race, agent, now_event, write, [&](std::int32_t x) { return clock_at(mine, x); },
      [&](const sched::RaceAccess& a, bool a_write) {
        result.findings.push_back(sched::Finding{
            sched::kinds::kDataRace,
            fmt::format("data race on {}: {} by {} at event {} and {} by {} at event {} are "
                        "not ordered by happens-before",
                        v.obj->name(), a_write ? "write" : "read", agents[a.who].name, a.at,
                        write ? "write" : "read", agents[agent].name, now_event),
            static_cast<std::int64_t>(decisions),
            {},
            {}});
      });
}

void Runtime::Impl::apply(int agent) {
  Agent& a = agents[agent];
  const Pending& p = a.pending;
  switch (p.kind) {
    case OpKind::kLock: {
      MutexState& mx = mutexes[p.object];
      mx.owner = agent;
      ++mx.depth;
      clock_join(a.clock, mx.clock);
      break;
    }
    case OpKind::kTryLock: {
      MutexState& mx = mutexes[p.object];
      a.took = can_take(mx, agent);
      if (a.took) {
        mx.owner = agent;
        ++mx.depth;
        clock_join(a.clock, mx.clock);
      }
      break;
    }
    case OpKind::kUnlock:
      release_mutex(agent, p.object);
      break;
    case OpKind::kRead:
    case OpKind::kWrite:
      check_access(agent, vars[p.object], p.kind == OpKind::kWrite);
      break;
    case OpKind::kJoin:
      clock_join(a.clock, agents[controlled[p.object]].clock);
      break;
    case OpKind::kReturn:
      a.away.pop_back();
      break;
    case OpKind::kStart:
    case OpKind::kPoint:
      break;
    default:  // the model's events, jobs and queues: never pending in a live thread
      break;
  }
  const auto [resource, write] = access_of(p, a.took);
  record(agent, op_text(p), true, resource, write);
  set_state(a, State::kRunning);
  a.go = true;
  woke();
  a.cv.notify_one();
}

void Runtime::Impl::free_op(std::unique_lock<std::mutex>& lk, int agent, const Pending& p) {
  switch (p.kind) {
    case OpKind::kLock: {
      MutexState& mx = mutexes[p.object];
      // A daemon thread blocked at the end of the program is stopped there (wind_down).
      mutex_cv.wait(lk, [&] { return can_take(mx, agent) || aborting; });
      if (!can_take(mx, agent)) throw Aborted{};
      mx.owner = agent;
      ++mx.depth;
      break;
    }
    case OpKind::kTryLock: {
      MutexState& mx = mutexes[p.object];
      agents[agent].took = can_take(mx, agent);
      if (agents[agent].took) {
        mx.owner = agent;
        ++mx.depth;
      }
      break;
    }
    case OpKind::kUnlock:
      release_mutex(agent, p.object);
      break;
    case OpKind::kJoin: {
      const Agent& target = agents[controlled[p.object]];
      mutex_cv.wait(lk, [&] { return target.state == State::kFinished || aborting; });
      if (target.state != State::kFinished) throw Aborted{};
      break;
    }
    default:
      break;
  }
}

void Runtime::Impl::park(std::unique_lock<std::mutex>& lk, int agent, Pending p) {
  Agent& a = agents[agent];
  if (!options.control) return free_op(lk, agent, p);
  if (aborting) throw Aborted{};
  a.pending = std::move(p);
  set_state(a, State::kAtPoint);
  a.go = false;
  bump();
  spin_then_wait(lk, a.cv, [&] { return a.go || aborting; });
  if (!a.go) throw Aborted{};
  a.go = false;
  // A thread that performed an operation inside a blocking call is controlled again (it runs on
  // its own thread, e.g. a CPU backward) until it parks or returns from the call.
}

// ---- Runtime.

Runtime::Runtime(const Options& options) : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
}

Runtime::~Runtime() = default;

Mutex& Runtime::make_mutex(std::string name, bool recursive, bool python_lock, bool waiter) {
  std::lock_guard lk(impl_->state_mutex);
  const int id = static_cast<int>(impl_->mutexes.size());
  auto& mx = impl_->mutexes.emplace_back();
  mx.obj.reset(new Mutex(this, id, std::move(name), recursive, python_lock, waiter));
  return *mx.obj;
}

int Runtime::next_var_id() {
  std::lock_guard lk(impl_->state_mutex);
  return static_cast<int>(impl_->vars.size());
}

void Runtime::adopt_var(std::unique_ptr<SharedVar> v) {
  std::lock_guard lk(impl_->state_mutex);
  impl_->vars.emplace_back().obj = std::move(v);
}

std::size_t Runtime::thread_count() const { return impl_->controlled.size(); }
const std::string& Runtime::thread_name(ThreadId t) const {
  return impl_->agents[impl_->controlled[t]].name;
}
bool Runtime::finished(ThreadId t) const {
  return impl_->agents[impl_->controlled[t]].state == State::kFinished;
}
std::string Runtime::pending_text(ThreadId t) const {
  return impl_->op_text(impl_->agents[impl_->controlled[t]].pending);
}

void Runtime::report(std::string kind, std::string message, bool fatal,
                     std::vector<sched::StackFrame> stack) {
  std::lock_guard lk(impl_->state_mutex);
  sched::Finding f;
  f.kind = std::move(kind);
  f.message = std::move(message);
  f.stack = std::move(stack);
  f.step = static_cast<std::int64_t>(impl_->decisions);
  impl_->result.findings.push_back(std::move(f));
  if (fatal) impl_->fatal = true;
  impl_->bump();
}

void Runtime::end_execution() {
  std::lock_guard lk(impl_->state_mutex);
  impl_->fatal = true;
  impl_->bump();
}

void Runtime::note(std::string text) {
  std::lock_guard lk(impl_->state_mutex);
  const int agent = (tl_rt == this && tl_agent >= 0) ? tl_agent : impl_->foreign_self();
  impl_->result.events.push_back(Event{impl_->agents[agent].name, "note: " + text,
                                       impl_->agents[agent].foreign, false, impl_->seconds()});
}

ThreadId Runtime::spawn(std::string name, std::function<void()> body, bool daemon) {
  Impl& impl = *impl_;
  std::lock_guard lk(impl.state_mutex);
  const int parent = (tl_rt == this) ? tl_agent : -1;
  const int agent = impl.add_agent(std::move(name), false);
  Impl::Agent& a = impl.agents[agent];
  a.daemon = daemon;
  if (parent >= 0) {
    clock_join(a.clock, impl.agents[parent].clock);
    impl.tick(parent);
  }
  a.pending = Pending{OpKind::kStart, -1, {}};
  impl.set_state(a, State::kAtPoint);
  a.os = std::thread([this, agent, body = std::move(body)] {
    Impl& impl = *impl_;
    tl_rt = this;
    tl_agent = agent;
    try {
      {
        // The thread was created parked at its start (spawn set it up); wait to be picked.
        std::unique_lock lk(impl.state_mutex);
        Impl::Agent& me = impl.agents[agent];
        if (impl.options.control) {
          impl.spin_then_wait(lk, me.cv, [&] { return me.go || impl.aborting; });
          if (!me.go) throw Aborted{};
          me.go = false;
        } else {
          impl.set_state(me, State::kRunning);
        }
      }
      body();
    } catch (const Aborted&) {
    } catch (const std::exception& e) {
      std::lock_guard lk(impl.state_mutex);
      impl.result.findings.push_back(
          sched::Finding{sched::kinds::kException,
                         fmt::format("{} threw: {}", impl.agents[agent].name, first_line(e.what())),
                         static_cast<std::int64_t>(impl.decisions),
                         {},
                         {}});
      impl.fatal = true;
    } catch (...) {
      std::lock_guard lk(impl.state_mutex);
      impl.result.findings.push_back(
          sched::Finding{sched::kinds::kException,
                         fmt::format("{} threw an exception that is not a std::exception",
                                     impl.agents[agent].name),
                         static_cast<std::int64_t>(impl.decisions),
                         {},
                         {}});
      impl.fatal = true;
    }
    std::lock_guard lk(impl.state_mutex);
    impl.set_state(impl.agents[agent], State::kFinished);
    impl.tick(agent);
    impl.bump();
    impl.mutex_cv.notify_all();  // joiners of the uncontrolled baseline wait there
    tl_rt = nullptr;
    tl_agent = -1;
  });
  impl.bump();
  return a.id;
}

}  // namespace racelab::live
