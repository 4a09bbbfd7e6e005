// Thread and primitive bookkeeping of the live runtime: registering agents (controlled and
// foreign threads), the text of pending operations, applying an operation the engine chose,
// parking a controlled thread at a scheduling point, and the Runtime members that create threads
// and primitives (see runtime_impl.h for the state, runtime.cc for the engine that drives it).
#include <fmt/format.h>

#include <algorithm>
#include <exception>

#include "live/runtime_impl.h"
#include "sched/kinds.h"
#include "util/hash.h"
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

// ---- Footprints (Options::footprints), what dpor reads of a live step (dpor_events.h):
//
//   lock, try lock, unlock   the mutex, as the model's are (MutexState::footprint), and the mutex
//                            as a variable read, which coverage and symmetry see and dpor does
//                            not order by (nothing writes that variable for it: foreign threads'
//                            lock operations are lock operations, below). Never a write: an
//                            unlock -> lock order through the variable, which the lock race rule
//                            does not skip, hid the race between two acquires (3 threads x one
//                            lock: 4 of 6 orders)
//   read, write              the variable (VarState::footprint)
//   join                     nothing but the joined thread's end (dpor_events.cc)
//   point                    what its table declares it stands for (live.h, PointAccess: reads
//                            and writes of named state); one that declares nothing writes "the
//                            program's state", as every other undeclared point does. A guarded
//                            point's (Python's queues, events, semaphores, barriers:
//                            racelab_sync.py) adds what its local code declares with touch()
//   return, start            nothing of their own
//   foreign operations       a foreign thread's lock, unlock, access or point while a step ran
//                            (inside the blocking call that step entered, or on a lock it released)
//                            belong to that step, with a write of that thread as a server unless
//                            it only read (note_foreign: a read holds no other call up). Its
//                            lock operations are the mutex's (sched::TouchMutex): an acquire races
//                            with the previous acquire and is enabled by the unlock before it. As
//                            a write of the mutex's variable (until 2026-12-05) it raced with that
//                            unlock, whose reversal can only block (the stand-in without a warmup:
//                            18 of 106 executions sleep-set blocked)
//   blocking call            a step that enters a call served by a thread (live.h, Blocking) reads
//                            that thread as a server: it depends on every step in which the server
//                            acted, since the server takes one call at a time and its work for one
//                            may hold up the other (two drafters' calls to one autograd worker, the
//                            first compiling its backward under a lock the second's caller holds:
//                            the lazy-compile deadlock). Two calls to one server commute as long as
//                            the server does nothing racelab sees for either.
//
// Objects are numbered by their names, process-wide, so that one name is one number in every
// execution of a search (ids are per execution and in creation order).
namespace {

std::int32_t footprint_id(std::uint64_t key) {
  static std::mutex m;
  static std::unordered_map<std::uint64_t, std::int32_t> ids;
  std::lock_guard g(m);
  return ids.try_emplace(key, static_cast<std::int32_t>(ids.size())).first->second;
}

std::int32_t program_state_id() {
  // Keyed as Impl::resource_key keys a resource, in a family no instrumented object has.
  static const std::int32_t id = footprint_id(fnv1a64("program", fnv1a64("state")) | 1);
  return id;
}

}  // namespace

sched::Op Runtime::Impl::footprint_op(const Pending& p) const {
  sched::Op op;
  op.kind = p.kind;
  switch (p.kind) {
    case OpKind::kLock:
    case OpKind::kTryLock:
    case OpKind::kUnlock:
      op.object = mutexes[p.object].footprint;
      break;
    case OpKind::kRead:
    case OpKind::kWrite:
      op.object = vars[p.object].footprint;
      break;
    case OpKind::kJoin:
      op.object = p.object;  // the joined thread's id
      break;
    default:
      break;
  }
  return op;
}

void Runtime::Impl::note_step(int agent) {
  const Agent& a = agents[agent];
  Step& s = steps.emplace_back();
  s.op = a.op;
  s.result = a.pending.kind == OpKind::kTryLock && a.took ? 1 : 0;
  switch (a.pending.kind) {
    case OpKind::kLock:
    case OpKind::kTryLock:
    case OpKind::kUnlock:
      s.touches.push_back({s.op.object, false});
      break;
    case OpKind::kPoint:
      point_touches(a.pending.accesses, s.touches);
      break;
    default:  // start, join, a variable's read or write: their objects alone
      break;
  }
}

void Runtime::Impl::point_touches(const std::vector<PointAccess>& accesses,
                                  std::vector<sched::Touch>& out) {
  if (accesses.empty()) out.push_back({program_state_id(), true});
  for (const PointAccess& x : accesses)
    out.push_back({footprint_id(resource_key("object", x.object)), x.write, x.awaited});
}

void Runtime::Impl::note_touch(std::string_view object, bool write, bool awaited) {
  if (!options.footprints || steps.empty()) return;
  steps.back().touches.push_back(
      {footprint_id(resource_key("object", std::string(object))), write, awaited});
}

std::int32_t Runtime::Impl::server_id(std::string_view server) {
  return footprint_id(resource_key("server", server));
}

void Runtime::Impl::note_call(std::string_view server) {
  if (!options.footprints || steps.empty()) return;
  steps.back().touches.push_back({server_id(server), false});
}

void Runtime::Impl::note_foreign_mutex(int foreign, int mutex, sched::TouchMutex op) {
  if (!options.footprints || steps.empty()) return;  // before the first decision: before all
  steps.back().touches.push_back({server_id(agents[foreign].name), true});
  steps.back().touches.push_back({mutexes[mutex].footprint, true, false, op});
}

void Runtime::Impl::note_foreign(int foreign, int var, bool write,
                                 const std::vector<PointAccess>* point) {
  if (!options.footprints || steps.empty()) return;  // before the first decision: before all
  // The server acted for this step only where what it did can hold another call up or be seen by
  // it: a write, or a point that writes or declares nothing. A read (a dict lookup of a checkpoint
  // recompute, an entry check) commutes with the other call's work, and its order against writes
  // of what it reads is its own touch below (docs/plans/issue-34-classes.md).
  const bool acts = var >= 0 ? write
                             : point == nullptr || point->empty() ||
                                   std::any_of(point->begin(), point->end(),
                                               [](const PointAccess& x) { return x.write; });
  if (acts) steps.back().touches.push_back({server_id(agents[foreign].name), true});
  if (var >= 0)
    steps.back().touches.push_back({vars[var].footprint, write});
  else if (point != nullptr)
    point_touches(*point, steps.back().touches);
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
  if (options.footprints) note_step(agent);
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
  if (options.footprints) a.op = footprint_op(a.pending);
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
  if (impl_->options.footprints) {
    std::string creator = "setup";
    if (tl_rt == this && tl_agent >= 0) {
      creator = impl_->agents[tl_agent].name;
    } else if (tl_rt != this) {
      const auto it = impl_->foreign_by_os.find(std::this_thread::get_id());
      creator = it != impl_->foreign_by_os.end() ? impl_->agents[it->second].name : "foreign";
    }
    const std::uint64_t key = fnv1a64(name, fnv1a64(creator));
    const std::uint32_t ordinal = impl_->created[key]++;
    mx.footprint = footprint_id(fnv1a64(std::to_string(ordinal), key) | 1);
  }
  mx.obj.reset(new Mutex(this, id, std::move(name), recursive, python_lock, waiter));
  return *mx.obj;
}

int Runtime::next_var_id() {
  std::lock_guard lk(impl_->state_mutex);
  return static_cast<int>(impl_->vars.size());
}

void Runtime::adopt_var(std::unique_ptr<SharedVar> v) {
  std::lock_guard lk(impl_->state_mutex);
  auto& var = impl_->vars.emplace_back();
  if (impl_->options.footprints) var.footprint = footprint_id(Impl::resource_key("var", v->name()));
  var.obj = std::move(v);
}

std::size_t Runtime::thread_count() const { return impl_->controlled.size(); }
const std::string& Runtime::thread_name(ThreadId t) const {
  return impl_->agents[impl_->controlled[t]].name;
}
bool Runtime::finished(ThreadId t) const {
  const auto i = static_cast<std::size_t>(t);
  if (impl_->decided) return i >= impl_->finals.size() || impl_->finals[i].finished;
  if (i >= impl_->controlled.size()) return true;  // not spawned (thread_capacity)
  return impl_->agents[impl_->controlled[i]].state == State::kFinished;
}
const sched::Op* Runtime::pending_op(ThreadId t) const {
  if (!impl_->options.footprints) return nullptr;
  const auto i = static_cast<std::size_t>(t);
  if (impl_->decided) return i < impl_->finals.size() ? &impl_->finals[i].op : nullptr;
  return i < impl_->controlled.size() ? &impl_->agents[impl_->controlled[i]].op : nullptr;
}
std::int64_t Runtime::step_result(std::uint64_t step) const {
  return step < impl_->steps.size() ? impl_->steps[step].result : 0;
}
std::span<const sched::Touch> Runtime::pending_touches(ThreadId t) const {
  const auto i = static_cast<std::size_t>(t);
  if (!impl_->decided || i >= impl_->finals.size()) return {};
  return impl_->finals[i].blocked;
}
std::span<const sched::Touch> Runtime::step_touches(std::uint64_t step) const {
  if (step >= impl_->steps.size()) return {};
  return impl_->steps[step].touches;
}
bool Runtime::ended_by_finding() const { return impl_->fatal; }
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

std::uint64_t Runtime::execution_index() const { return impl_->index; }

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
