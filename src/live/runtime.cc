// The live runtime: controlled real threads, foreign threads, hang detection (see live.h).
//
// All state sits behind one std::mutex (Impl::m). A controlled thread parks at a scheduling point
// by recording its pending operation and waiting on its own condition variable until the engine
// has applied that operation and handed it the token. The engine thread waits on engine_cv for
// "activity" (a counter bumped by every park, foreign operation, finish and blocking call), which
// is how it notices the running thread coming back and foreign threads acting.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <thread>
#include <unordered_map>

#include "live/live.h"
#include "sched/race.h"
#include "sched/strategies/strategies.h"
#include "util/text.h"

namespace racelab::live {

namespace {

struct Aborted {};  // thrown at a scheduling point once the execution is over

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

using SteadyClock = std::chrono::steady_clock;
using VClock = std::vector<std::uint32_t>;

thread_local Runtime* tl_rt = nullptr;
thread_local int tl_agent = -1;  // the calling thread's agent in tl_rt, when it is controlled
std::atomic<Runtime*> g_active{nullptr};
std::atomic<std::uint64_t> g_serial{0};  // executions started in this process

// Runtimes left with threads stuck in real calls: never destroyed, since those threads may still
// wake up and touch them.
std::mutex g_graveyard_mutex;
std::vector<std::shared_ptr<Runtime>> g_graveyard;

enum class PKind { kStart, kLock, kTryLock, kUnlock, kPoint, kRead, kWrite, kJoin, kReturn };
struct Pending {
  PKind kind = PKind::kStart;
  int object = -1;
  std::string label;
};

enum class State {
  kAtPoint,   // controlled, parked at a scheduling point with a pending operation
  kRunning,   // controlled, holds the token
  kAway,      // controlled, inside a Blocking call
  kFinished,  // controlled, its body returned
  kFree,      // foreign, not waiting on an instrumented mutex
  kWaiting,   // foreign, waiting for an instrumented mutex
};

void clock_join(VClock& into, const VClock& from) {
  if (into.size() < from.size()) into.resize(from.size(), 0);
  for (std::size_t i = 0; i < from.size(); ++i) into[i] = std::max(into[i], from[i]);
}

std::uint32_t clock_at(const VClock& c, int i) { return i < static_cast<int>(c.size()) ? c[i] : 0; }

}  // namespace

struct Runtime::Impl {
  struct Agent {
    std::string name;
    bool foreign = false;
    ThreadId id = sched::kNoThread;  // controlled threads: the id strategies see
    State state = State::kAtPoint;
    Pending pending;
    bool took = false;  // the outcome of the last try lock
    bool go = false;
    std::condition_variable cv;
    std::vector<std::pair<std::string, std::string>> away;  // Blocking scopes: (what, served by)
    SteadyClock::time_point since;                          // of the current state
    int waiting_mutex = -1;
    VClock clock;
    std::thread os;
    std::string last;  // the last operation it performed, for reports
  };
  struct MutexState {
    std::unique_ptr<Mutex> obj;
    int owner = -1;  // agent
    int depth = 0;
    VClock clock;
  };
  struct VarState {
    std::unique_ptr<SharedVar> obj;
    sched::RaceState race;
  };

  Options options;
  std::mutex m;
  std::condition_variable engine_cv;
  std::condition_variable mutex_cv;  // foreign threads waiting for a mutex
  std::deque<Agent> agents;          // stable addresses
  std::vector<int> controlled;       // ThreadId -> agent
  std::unordered_map<std::thread::id, int> foreign_by_os;
  std::vector<MutexState> mutexes;
  std::vector<VarState> vars;
  Result result;
  std::uint64_t activity = 0;
  std::uint64_t decisions = 0;
  bool aborting = false;
  bool fatal = false;
  bool foreign_released_python_lock = false;  // see report_stuck
  SteadyClock::time_point start = SteadyClock::now();

  // Bumped with every change a waiter may wait for (activity, a thread's turn, the end);
  // waiters spin on it for Options::spin before they sleep.
  std::atomic<std::uint64_t> wake{0};
  void woke() { wake.fetch_add(1, std::memory_order_release); }
  // Spins (the lock released) while `pred` is false and nothing was woken, for Options::spin at
  // most; yields now and then, so that on a machine with few cores the thread that has work runs.
  template <class Pred>
  void spin(std::unique_lock<std::mutex>& lk, Pred pred) {
    if (options.spin.count() <= 0 || pred()) return;
    const auto end = SteadyClock::now() + options.spin;
    do {
      const std::uint64_t seen = wake.load(std::memory_order_acquire);
      lk.unlock();
      for (unsigned i = 1; wake.load(std::memory_order_acquire) == seen; ++i) {
        if (i % 64 == 0) {
          if (SteadyClock::now() >= end) break;
          std::this_thread::yield();
        } else {
          cpu_relax();
        }
      }
      lk.lock();
    } while (!pred() && SteadyClock::now() < end);
  }
  template <class Pred>
  void spin_then_wait(std::unique_lock<std::mutex>& lk, std::condition_variable& cv, Pred pred) {
    spin(lk, pred);
    cv.wait(lk, pred);
  }

  void bump() {
    ++activity;
    woke();
    engine_cv.notify_all();
  }
  double seconds() const {
    return std::chrono::duration<double>(SteadyClock::now() - start).count();
  }
  double age(const Agent& a) const {
    return std::chrono::duration<double>(SteadyClock::now() - a.since).count();
  }
  void record(int agent, std::string text, bool decision) {
    Agent& a = agents[agent];
    a.last = text;
    result.events.push_back(Event{a.name, std::move(text), a.foreign, decision, seconds()});
  }
  void set_state(Agent& a, State s) {
    a.state = s;
    a.since = SteadyClock::now();
  }
  void tick(int agent) {
    VClock& c = agents[agent].clock;
    if (static_cast<int>(c.size()) <= agent) c.resize(agent + 1, 0);
    ++c[agent];
  }

  int add_agent(std::string name, bool foreign) {
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

  // The calling thread's agent as a foreign thread, registering it on first use.
  int foreign_self() {
    const auto os = std::this_thread::get_id();
    auto it = foreign_by_os.find(os);
    if (it != foreign_by_os.end()) return it->second;
    const int id = add_agent(fmt::format("foreign thread {}", foreign_by_os.size() + 1), true);
    foreign_by_os.emplace(os, id);
    return id;
  }

  std::string op_text(const Pending& p) const {
    switch (p.kind) {
      case PKind::kStart:
        return "start";
      case PKind::kLock:
        return "lock " + mutexes[p.object].obj->name();
      case PKind::kTryLock:
        return "try lock " + mutexes[p.object].obj->name();
      case PKind::kUnlock:
        return "unlock " + mutexes[p.object].obj->name();
      case PKind::kPoint:
        return p.label;
      case PKind::kRead:
        return "read " + vars[p.object].obj->name();
      case PKind::kWrite:
        return "write " + vars[p.object].obj->name();
      case PKind::kJoin:
        return "join " + agents[controlled[p.object]].name;
      case PKind::kReturn:
        return "return from " + p.label;
    }
    return "?";
  }

  bool can_take(const MutexState& mx, int agent) const {
    return mx.owner == -1 || (mx.owner == agent && mx.obj->recursive());
  }

  bool enabled(int agent) const {
    const Agent& a = agents[agent];
    if (a.state != State::kAtPoint) return false;
    switch (a.pending.kind) {
      case PKind::kLock:
        return can_take(mutexes[a.pending.object], agent);
      case PKind::kJoin:
        return agents[controlled[a.pending.object]].state == State::kFinished;
      default:
        return true;
    }
  }

  bool all_finished() const {
    for (int c : controlled)
      if (agents[c].state != State::kFinished) return false;
    return true;
  }
  int running() const {
    for (int c : controlled)
      if (agents[c].state == State::kRunning) return c;
    return -1;
  }
  bool any_away() const {
    for (int c : controlled)
      if (agents[c].state == State::kAway) return true;
    return false;
  }
  // Whether something outside the engine's control is in progress: a thread inside a blocking
  // call, or a foreign thread holding or waiting for an instrumented mutex.
  bool foreign_busy() const {
    if (any_away()) return true;
    for (const MutexState& mx : mutexes)
      if (mx.owner >= 0 && agents[mx.owner].foreign) return true;
    for (const Agent& a : agents)
      if (a.foreign && a.state == State::kWaiting) return true;
    return false;
  }
  // Whether anything outside the engine's control may still enable a thread: a thread inside a
  // blocking call may come back; a free foreign thread may release a mutex it holds.
  bool can_change() const {
    if (any_away()) return true;
    for (const MutexState& mx : mutexes) {
      if (mx.owner >= 0 && agents[mx.owner].foreign && agents[mx.owner].state == State::kFree)
        return true;
    }
    return false;
  }

  // ---- Operations.
  void release_mutex(int agent, int id) {
    MutexState& mx = mutexes[id];
    if (mx.depth <= 0) return;  // a Python lock released twice by two threads at once
    if (--mx.depth == 0) {
      mx.owner = -1;
      clock_join(mx.clock, agents[agent].clock);
      tick(agent);
      mutex_cv.notify_all();
    }
  }

  void check_access(int agent, VarState& v, bool write) {
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

  // Performs controlled agent's pending operation and hands it the token.
  void apply(int agent) {
    Agent& a = agents[agent];
    const Pending& p = a.pending;
    switch (p.kind) {
      case PKind::kLock: {
        MutexState& mx = mutexes[p.object];
        mx.owner = agent;
        ++mx.depth;
        clock_join(a.clock, mx.clock);
        break;
      }
      case PKind::kTryLock: {
        MutexState& mx = mutexes[p.object];
        a.took = can_take(mx, agent);
        if (a.took) {
          mx.owner = agent;
          ++mx.depth;
          clock_join(a.clock, mx.clock);
        }
        break;
      }
      case PKind::kUnlock:
        release_mutex(agent, p.object);
        break;
      case PKind::kRead:
      case PKind::kWrite:
        check_access(agent, vars[p.object], p.kind == PKind::kWrite);
        break;
      case PKind::kJoin:
        clock_join(a.clock, agents[controlled[p.object]].clock);
        break;
      case PKind::kReturn:
        a.away.pop_back();
        break;
      case PKind::kStart:
      case PKind::kPoint:
        break;
    }
    record(agent, op_text(p), true);
    set_state(a, State::kRunning);
    a.go = true;
    woke();
    a.cv.notify_one();
  }

  // Options::control == false: performs a scheduling point's operation at once, as plain code.
  void free_op(std::unique_lock<std::mutex>& lk, int agent, const Pending& p) {
    switch (p.kind) {
      case PKind::kLock: {
        MutexState& mx = mutexes[p.object];
        mutex_cv.wait(lk, [&] { return can_take(mx, agent); });
        mx.owner = agent;
        ++mx.depth;
        break;
      }
      case PKind::kTryLock: {
        MutexState& mx = mutexes[p.object];
        agents[agent].took = can_take(mx, agent);
        if (agents[agent].took) {
          mx.owner = agent;
          ++mx.depth;
        }
        break;
      }
      case PKind::kUnlock:
        release_mutex(agent, p.object);
        break;
      case PKind::kJoin: {
        const Agent& target = agents[controlled[p.object]];
        mutex_cv.wait(lk, [&] { return target.state == State::kFinished; });
        break;
      }
      default:
        break;
    }
  }

  // Parks the calling controlled thread at a scheduling point until the engine applies `p`.
  void park(std::unique_lock<std::mutex>& lk, int agent, Pending p) {
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

  // ---- Reports.
  std::string holds_text(int agent) const {
    std::vector<std::string> held;
    for (const MutexState& mx : mutexes)
      if (mx.owner == agent && !mx.obj->waiter()) held.push_back(mx.obj->name());
    if (held.empty()) return {};
    return fmt::format("holds {} and ", fmt::join(held, ", "));
  }
  int agent_named(const std::string& name) const {
    for (std::size_t i = 0; i < agents.size(); ++i)
      if (agents[i].name == name) return static_cast<int>(i);
    return -1;
  }
  // What `agent` waits for, and the agent it waits on (-1: none known).
  std::pair<std::string, int> wait_of(int agent, bool timed = false) const {
    const Agent& a = agents[agent];
    auto lock_wait = [&](int m, const std::string& waits_for) -> std::pair<std::string, int> {
      const MutexState& mx = mutexes[m];
      // A Python lock its waiter holds itself is how Condition.wait parks: some other thread must
      // release it, and which one is the program's business (the bridge says what for).
      if (mx.obj->python_lock() && mx.owner == agent) {
        return {fmt::format("waits for {}",
                            waits_for.empty() ? "a wake-up on " + mx.obj->name() : waits_for),
                -1};
      }
      return {fmt::format("waits for {} held by {}", waits_for.empty() ? mx.obj->name() : waits_for,
                          mx.owner >= 0 ? agents[mx.owner].name : "nobody"),
              mx.owner};
    };
    switch (a.state) {
      case State::kAtPoint:
        if (a.pending.kind == PKind::kLock && !enabled(agent))
          return lock_wait(a.pending.object, a.pending.label);
        if (a.pending.kind == PKind::kJoin && !enabled(agent)) {
          const int t = controlled[a.pending.object];
          return {fmt::format("waits for {} to finish", agents[t].name), t};
        }
        return {fmt::format("is ready to {}", op_text(a.pending)), -1};
      case State::kRunning:
        return {fmt::format("has run{} without reaching a scheduling point{} (last: {})",
                            timed ? fmt::format(" {:.1f} s", age(a)) : "",
                            a.away.empty() ? "" : " inside " + a.away.back().first, a.last),
                -1};
      case State::kAway: {
        const auto& [what, server] = a.away.back();
        const int s = server.empty() ? -1 : agent_named(server);
        return {
            fmt::format("is inside {}{}{}", what, timed ? fmt::format(" for {:.1f} s", age(a)) : "",
                        server.empty() ? "" : ", served by " + server),
            s};
      }
      case State::kWaiting:
        return lock_wait(a.waiting_mutex, {});
      case State::kFree:
        return {fmt::format("runs freely (last: {})", a.last.empty() ? "nothing" : a.last), -1};
      case State::kFinished:
        return {"has finished", -1};
    }
    return {"?", -1};
  }

  // A cycle in the wait-for graph (lock owners, joined threads, the threads serving blocking
  // calls), starting at its first controlled thread so that it reads the same however the
  // foreign threads were numbered; empty when there is none.
  std::vector<int> find_cycle() const {
    for (std::size_t start = 0; start < agents.size(); ++start) {
      std::vector<int> path;
      int t = static_cast<int>(start);
      while (t >= 0 && agents[t].state != State::kFinished &&
             std::find(path.begin(), path.end(), t) == path.end()) {
        path.push_back(t);
        t = wait_of(t).second;
      }
      if (t < 0 || agents[t].state == State::kFinished) continue;
      std::vector<int> cycle(std::find(path.begin(), path.end(), t), path.end());
      auto first = std::min_element(cycle.begin(), cycle.end(), [&](int x, int y) {
        const auto key = [&](int v) { return std::pair(agents[v].foreign, agents[v].id); };
        return key(x) < key(y);
      });
      std::rotate(cycle.begin(), first, cycle.end());
      return cycle;
    }
    return {};
  }

  // `settled`: no controlled thread can run and nothing outside the engine's control can change
  // that (no thread is inside a blocking call, no foreign thread holds or waits for a mutex or has
  // ever released a Python lock), so the threads wait for each other even where no single
  // wait-for cycle can be named (Condition waits name no waker).
  void report_stuck(std::string_view headline, bool settled = false) {
    sched::Finding f;
    f.step = static_cast<std::int64_t>(decisions);
    for (std::size_t i = 0; i < agents.size(); ++i) {
      const Agent& a = agents[i];
      if (a.state == State::kFinished) continue;
      if (a.foreign && a.state == State::kFree && a.last.empty()) continue;
      f.details.push_back(a.name + " " + holds_text(static_cast<int>(i)) +
                          wait_of(static_cast<int>(i), true).first);
    }
    const std::vector<int> cycle = find_cycle();
    if (!cycle.empty()) {
      std::string msg = "deadlock: ";
      for (int c : cycle) {
        f.cycle.push_back(agents[c].name);
        msg += fmt::format("{}{} {}{}", f.cycle.size() == 1 ? "" : "; ", agents[c].name,
                           holds_text(c), wait_of(c).first);
      }
      f.message = msg;
    }
    const int lost = running();
    if (!f.cycle.empty()) {
      f.kind = sched::kinds::kDeadlock;
    } else if (settled && !foreign_released_python_lock) {
      std::string msg = "deadlock: no thread can run and nothing else can wake one: ";
      bool first = true;
      for (int c : controlled) {
        if (agents[c].state == State::kFinished) continue;
        f.cycle.push_back(agents[c].name);
        msg += fmt::format("{}{} {}{}", first ? "" : "; ", agents[c].name, holds_text(c),
                           wait_of(c).first);
        first = false;
      }
      f.kind = sched::kinds::kDeadlock;
      f.message = msg;
    } else if (lost >= 0) {
      // The thread holding the turn never came back: it waits in a call racelab does not see
      // (a lock or queue a library made, real I/O). That is racelab's blind spot, not a verdict.
      f.kind = sched::kinds::kLostControl;
      f.message = fmt::format(
          "racelab lost control of {}: it {}; it is blocked or busy in a call racelab does not "
          "control. This is not a verdict on the program: interpose the call it waits in (a "
          "table's \"blocking\" entry, or --blocking MODULE.FUNC), or raise --hang-timeout if "
          "the call is only slow",
          agents[lost].name, holds_text(lost) + wait_of(lost, true).first);
    } else {
      f.kind = kinds::kHang;
      f.message =
          fmt::format("{}: {}", headline, f.details.empty() ? "no thread left" : f.details.front());
    }
    result.findings.push_back(std::move(f));
  }
};

// ---- Runtime.

Runtime::Runtime(const Options& options) : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
}

Runtime::~Runtime() = default;

Mutex& Runtime::make_mutex(std::string name, bool recursive, bool python_lock, bool waiter) {
  std::lock_guard lk(impl_->m);
  const int id = static_cast<int>(impl_->mutexes.size());
  auto& mx = impl_->mutexes.emplace_back();
  mx.obj.reset(new Mutex(this, id, std::move(name), recursive, python_lock, waiter));
  return *mx.obj;
}

int Runtime::next_var_id() {
  std::lock_guard lk(impl_->m);
  return static_cast<int>(impl_->vars.size());
}

void Runtime::adopt_var(std::unique_ptr<SharedVar> v) {
  std::lock_guard lk(impl_->m);
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

void Runtime::report(std::string kind, std::string message, bool fatal) {
  std::lock_guard lk(impl_->m);
  sched::Finding f;
  f.kind = std::move(kind);
  f.message = std::move(message);
  f.step = static_cast<std::int64_t>(impl_->decisions);
  impl_->result.findings.push_back(std::move(f));
  if (fatal) impl_->fatal = true;
  impl_->bump();
}

void Runtime::end_execution() {
  std::lock_guard lk(impl_->m);
  impl_->fatal = true;
  impl_->bump();
}

void Runtime::note(std::string text) {
  std::lock_guard lk(impl_->m);
  const int agent = (tl_rt == this && tl_agent >= 0) ? tl_agent : impl_->foreign_self();
  impl_->result.events.push_back(Event{impl_->agents[agent].name, "note: " + text,
                                       impl_->agents[agent].foreign, false, impl_->seconds()});
}

ThreadId Runtime::spawn(std::string name, std::function<void()> body) {
  Impl& I = *impl_;
  std::lock_guard lk(I.m);
  const int parent = (tl_rt == this) ? tl_agent : -1;
  const int agent = I.add_agent(std::move(name), false);
  Impl::Agent& a = I.agents[agent];
  if (parent >= 0) {
    clock_join(a.clock, I.agents[parent].clock);
    I.tick(parent);
  }
  a.pending = Pending{PKind::kStart, -1, {}};
  I.set_state(a, State::kAtPoint);
  a.os = std::thread([this, agent, body = std::move(body)] {
    Impl& I = *impl_;
    tl_rt = this;
    tl_agent = agent;
    try {
      {
        // The thread was created parked at its start (spawn set it up); wait to be picked.
        std::unique_lock lk(I.m);
        Impl::Agent& me = I.agents[agent];
        if (I.options.control) {
          I.spin_then_wait(lk, me.cv, [&] { return me.go || I.aborting; });
          if (!me.go) throw Aborted{};
          me.go = false;
        } else {
          I.set_state(me, State::kRunning);
        }
      }
      body();
    } catch (const Aborted&) {
    } catch (const std::exception& e) {
      std::lock_guard lk(I.m);
      I.result.findings.push_back(
          sched::Finding{sched::kinds::kException,
                         fmt::format("{} threw: {}", I.agents[agent].name, first_line(e.what())),
                         static_cast<std::int64_t>(I.decisions),
                         {},
                         {}});
      I.fatal = true;
    } catch (...) {
      std::lock_guard lk(I.m);
      I.result.findings.push_back(sched::Finding{
          sched::kinds::kException,
          fmt::format("{} threw an exception that is not a std::exception", I.agents[agent].name),
          static_cast<std::int64_t>(I.decisions),
          {},
          {}});
      I.fatal = true;
    }
    std::lock_guard lk(I.m);
    I.set_state(I.agents[agent], State::kFinished);
    I.tick(agent);
    I.bump();
    I.mutex_cv.notify_all();  // joiners of the uncontrolled baseline wait there
    tl_rt = nullptr;
    tl_agent = -1;
  });
  I.bump();
  return a.id;
}

// ---- Primitives.

bool Mutex::locked() const {
  Runtime::Impl& I = *rt_->impl_;
  std::lock_guard lk(I.m);
  return I.mutexes[id_].owner >= 0;
}

void Mutex::lock_waiting_for(std::string waits_for) {
  Runtime::Impl& I = *rt_->impl_;
  std::unique_lock lk(I.m);
  if (tl_rt == rt_ && tl_agent >= 0) {
    I.park(lk, tl_agent, Pending{PKind::kLock, id_, std::move(waits_for)});
    return;
  }
  const int f = I.foreign_self();
  auto& mx = I.mutexes[id_];
  if (!I.can_take(mx, f)) {
    Runtime::Impl::Agent& a = I.agents[f];
    a.waiting_mutex = id_;
    I.set_state(a, State::kWaiting);
    I.record(f, "waits for " + name_, false);
    I.bump();
    I.mutex_cv.wait(lk, [&] { return I.can_take(mx, f); });
    a.waiting_mutex = -1;
    I.set_state(a, State::kFree);
  }
  mx.owner = f;
  ++mx.depth;
  clock_join(I.agents[f].clock, mx.clock);
  I.record(f, "lock " + name_, false);
  I.bump();
}

bool Mutex::try_lock() {
  Runtime::Impl& I = *rt_->impl_;
  std::unique_lock lk(I.m);
  if (tl_rt == rt_ && tl_agent >= 0) {
    const int me = tl_agent;
    I.park(lk, me, Pending{PKind::kTryLock, id_, {}});
    return I.agents[me].took;
  }
  const int f = I.foreign_self();
  auto& mx = I.mutexes[id_];
  if (!I.can_take(mx, f)) {
    I.record(f, "try lock " + name_ + " (busy)", false);
    I.bump();
    return false;
  }
  mx.owner = f;
  ++mx.depth;
  clock_join(I.agents[f].clock, mx.clock);
  I.record(f, "lock " + name_, false);
  I.bump();
  return true;
}

void Mutex::unlock() {
  Runtime::Impl& I = *rt_->impl_;
  std::unique_lock lk(I.m);
  auto& mx = I.mutexes[id_];
  // A Python lock may be released by any thread; releasing it unheld is the bridge's error.
  const bool by_anyone = python_lock_ && mx.owner >= 0;
  if (tl_rt == rt_ && tl_agent >= 0) {
    if (mx.owner != tl_agent && !by_anyone) {
      // Unwinding an execution that is over (a `with` block's release after its acquire was cut
      // short) is not the program's error.
      if (I.aborting) return;
      I.result.findings.push_back(sched::Finding{
          sched::kinds::kAssertion,
          fmt::format("{} unlocked {}, which it does not hold", I.agents[tl_agent].name, name_),
          static_cast<std::int64_t>(I.decisions),
          {},
          {}});
      I.fatal = true;
      return;
    }
    // Unlock is called from destructors (std::lock_guard): once the execution is over it releases
    // at once instead of throwing.
    if (I.aborting || std::uncaught_exceptions() > 0 || !I.options.control) {
      I.release_mutex(tl_agent, id_);
      return;
    }
    try {
      I.park(lk, tl_agent, Pending{PKind::kUnlock, id_, {}});
    } catch (const Aborted&) {
      I.release_mutex(tl_agent, id_);
    }
    return;
  }
  const int f = I.foreign_self();
  if (mx.owner != f && !by_anyone) {
    I.result.findings.push_back(sched::Finding{
        sched::kinds::kAssertion,
        fmt::format("{} unlocked {}, which it does not hold", I.agents[f].name, name_),
        static_cast<std::int64_t>(I.decisions),
        {},
        {}});
    return;
  }
  if (python_lock_) I.foreign_released_python_lock = true;
  I.release_mutex(f, id_);
  I.record(f, "unlock " + name_, false);
  I.bump();
}

void SharedVar::access(bool write, const std::function<void()>& touch) {
  Runtime::Impl& I = *rt_->impl_;
  std::unique_lock lk(I.m);
  if (tl_rt == rt_ && tl_agent >= 0) {
    I.park(lk, tl_agent, Pending{write ? PKind::kWrite : PKind::kRead, id_, {}});
  } else if (tl_rt == rt_) {
    // The engine thread, in setup (before every thread starts) or finish (after all ended).
  } else {
    const int f = I.foreign_self();
    I.check_access(f, I.vars[id_], write);
    I.record(f, fmt::format("{} {}", write ? "write" : "read", name_), false);
    I.bump();
  }
  touch();
}

void point(std::string_view label) {
  if (tl_rt != nullptr && tl_agent >= 0) {
    Runtime::Impl& I = *tl_rt->impl_;
    std::unique_lock lk(I.m);
    I.park(lk, tl_agent, Pending{PKind::kPoint, -1, std::string(label)});
    return;
  }
  Runtime* rt = g_active.load();
  if (rt == nullptr) return;
  Runtime::Impl& I = *rt->impl_;
  std::lock_guard lk(I.m);
  I.record(I.foreign_self(), std::string(label), false);
  I.bump();
}

Blocking::Blocking(std::string what, std::string served_by) : rt_(tl_rt), id_(tl_agent) {
  if (rt_ == nullptr || id_ < 0) {
    rt_ = nullptr;
    return;
  }
  Runtime::Impl& I = *rt_->impl_;
  if (!I.options.control) {
    rt_ = nullptr;
    return;
  }
  std::lock_guard lk(I.m);
  Runtime::Impl::Agent& a = I.agents[id_];
  I.record(id_, "call " + what, false);
  a.away.emplace_back(std::move(what), std::move(served_by));
  I.set_state(a, State::kAway);
  I.bump();
}

Blocking::~Blocking() {
  if (rt_ == nullptr) return;
  Runtime::Impl& I = *rt_->impl_;
  std::unique_lock lk(I.m);
  Runtime::Impl::Agent& a = I.agents[id_];
  if (I.aborting || std::uncaught_exceptions() > 0) {
    if (!a.away.empty()) a.away.pop_back();
    return;
  }
  try {
    I.park(lk, id_, Pending{PKind::kReturn, -1, a.away.back().first});
  } catch (const Aborted&) {
    // The execution ended while this thread was inside the call; it stops at its next operation.
  }
}

void name_this_thread(std::string name) {
  Runtime* rt = g_active.load();
  if (rt == nullptr || (tl_rt == rt && tl_agent >= 0)) return;
  Runtime::Impl& I = *rt->impl_;
  std::lock_guard lk(I.m);
  I.agents[I.foreign_self()].name = std::move(name);
}

bool controlled() { return tl_rt != nullptr && tl_agent >= 0 && g_active.load() == tl_rt; }

ThreadId spawn(std::string name, std::function<void()> body) {
  Runtime* rt = tl_rt != nullptr ? tl_rt : g_active.load();
  if (rt == nullptr) throw std::logic_error("racelab::live::spawn outside a live execution");
  return rt->spawn(std::move(name), std::move(body));
}

void join(ThreadId t) {
  if (tl_rt == nullptr || tl_agent < 0)
    throw std::logic_error("racelab::live::join from a thread that is not controlled");
  Runtime::Impl& I = *tl_rt->impl_;
  std::unique_lock lk(I.m);
  I.park(lk, tl_agent, Pending{PKind::kJoin, t, {}});
}

Runtime* active_runtime() { return g_active.load(); }

std::uint64_t execution_serial() { return g_active.load() != nullptr ? g_serial.load() : 0; }

bool stopping() {
  Runtime* rt = tl_rt != nullptr ? tl_rt : g_active.load();
  if (rt == nullptr) return true;
  std::lock_guard lk(rt->impl_->m);
  return rt->impl_->aborting;
}

bool wait_hung_threads(std::chrono::milliseconds timeout) {
  std::vector<std::shared_ptr<Runtime>> rts;
  {
    std::lock_guard g(g_graveyard_mutex);
    rts = g_graveyard;
  }
  const auto end = SteadyClock::now() + timeout;
  for (auto& rt : rts) {
    Runtime::Impl& I = *rt->impl_;
    std::unique_lock lk(I.m);
    if (!I.engine_cv.wait_until(lk, end, [&] { return I.all_finished(); })) return false;
  }
  return true;
}

// ---- Results.

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

// ---- The engine.

std::optional<Result> run(Subject& subject, sched::Strategy& strategy, std::uint64_t index,
                          const Options& options) {
  if (!strategy.begin_execution(index)) return std::nullopt;
  std::shared_ptr<Runtime> rt(new Runtime(options));
  Runtime::Impl& I = *rt->impl_;
  Runtime* expected = nullptr;
  if (!g_active.compare_exchange_strong(expected, rt.get()))
    throw std::logic_error("racelab::live::run: another live execution is running");
  ++g_serial;
  Runtime* const outer_rt = tl_rt;
  const int outer_agent = tl_agent;
  tl_rt = rt.get();
  tl_agent = -1;

  bool hung = false;
  std::exception_ptr error;
  try {
    subject.setup(*rt);
    std::unique_lock lk(I.m);
    if (!options.control) {
      // The baseline: the threads run as plain code; wait for them to end.
      I.engine_cv.wait(lk, [&] { return I.all_finished() || I.fatal; });
    }
    ThreadId previous = sched::kNoThread;
    std::vector<ThreadId> enabled;
    auto wait_activity = [&](auto until_done) {
      // Waits until until_done() holds; false when nothing at all happened for hang_timeout.
      I.spin(lk, until_done);
      while (!until_done()) {
        const std::uint64_t seen = I.activity;
        if (!I.engine_cv.wait_for(lk, options.hang_timeout,
                                  [&] { return until_done() || I.activity != seen; }))
          return false;
      }
      return true;
    };
    while (options.control) {
      // 1. The running thread comes back to a scheduling point, goes away or finishes.
      if (!wait_activity([&] { return I.running() < 0 || I.fatal; })) {
        I.report_stuck(fmt::format("hang: no progress for {:.1f} s",
                                   std::chrono::duration<double>(options.hang_timeout).count()));
        hung = true;
        break;
      }
      if (I.fatal) break;
      // 2. Let foreign threads and threads inside blocking calls reach their next operation: while
      // a thread is away or a foreign thread holds or waits for a mutex, wait until nothing has
      // happened for `settle`.
      {
        const auto settle_end = SteadyClock::now() + options.hang_timeout;
        while (I.foreign_busy() && SteadyClock::now() < settle_end) {
          const std::uint64_t seen = I.activity;
          I.engine_cv.wait_for(lk, options.settle, [&] { return I.activity != seen; });
          if (I.activity == seen) break;
        }
      }
      // 3. Choose.
      enabled.clear();
      for (ThreadId t = 0; t < static_cast<ThreadId>(I.controlled.size()); ++t)
        if (I.enabled(I.controlled[t])) enabled.push_back(t);
      if (enabled.empty()) {
        if (I.all_finished()) break;
        if (!I.can_change()) {
          I.report_stuck("deadlock: no thread can run", true);
          break;
        }
        // Only something outside the engine's control can move now. A wait-for cycle through it
        // that holds still for cycle_confirm is a deadlock; otherwise wait up to hang_timeout.
        const std::uint64_t seen = I.activity;
        const bool cycle = !I.find_cycle().empty();
        const auto patience =
            cycle ? std::min(options.cycle_confirm, options.hang_timeout) : options.hang_timeout;
        if (!I.engine_cv.wait_for(lk, patience, [&] { return I.activity != seen || I.fatal; })) {
          I.report_stuck(fmt::format("hang: no progress for {:.1f} s",
                                     std::chrono::duration<double>(patience).count()));
          hung = true;
          break;
        }
        continue;
      }
      sched::Decision d;
      d.enabled = enabled;
      d.previous = previous;
      d.previous_enabled = previous != sched::kNoThread && I.enabled(I.controlled[previous]);
      d.step = I.decisions;
      d.exec = rt.get();
      // A replayed step whose thread waits for a mutex a foreign thread holds, or for a thread
      // that is away: wait for the world to catch up rather than diverge.
      if (strategy.awaited(d) && I.can_change()) {
        const std::uint64_t seen = I.activity;
        if (I.engine_cv.wait_for(lk, options.hang_timeout,
                                 [&] { return I.activity != seen || I.fatal; }))
          continue;
      }
      if (I.decisions >= options.max_steps) {
        I.result.findings.push_back(sched::Finding{
            sched::kinds::kLivelock,
            fmt::format("livelock: no end after {} steps; threads keep running without finishing",
                        options.max_steps),
            static_cast<std::int64_t>(I.decisions),
            {},
            {}});
        break;
      }
      const ThreadId t = strategy.pick(d);
      if (d.previous_enabled && t != previous) ++I.result.preemptions;
      I.result.choices.push_back(t);
      previous = t;
      I.apply(I.controlled[t]);
      ++I.decisions;
    }
  } catch (...) {
    error = std::current_exception();
  }

  if (hung) subject.stuck();  // before anything unwinds
  // Wind down: parked threads unwind from their scheduling point; threads in real calls cannot.
  {
    std::unique_lock lk(I.m);
    I.aborting = true;
    I.woke();
    for (int c : I.controlled) I.agents[c].cv.notify_all();
    if (!hung) {
      const bool all = I.engine_cv.wait_for(lk, options.hang_timeout, [&] {
        for (int c : I.controlled) {
          if (I.agents[c].state != State::kFinished) return false;
        }
        return true;
      });
      hung = !all;
    }
    if (hung) {
      for (int c : I.controlled)
        if (I.agents[c].os.joinable()) I.agents[c].os.detach();
    }
    I.result.hung = hung;
    I.result.completed =
        !hung && !I.fatal && !error && I.all_finished() &&
        std::none_of(I.result.findings.begin(), I.result.findings.end(),
                     [](const sched::Finding& f) {
                       return f.kind == sched::kinds::kDeadlock || f.kind == kinds::kHang ||
                              f.kind == kinds::kLostControl || f.kind == sched::kinds::kLivelock;
                     });
  }
  if (!hung) {
    for (int c : I.controlled)
      if (I.agents[c].os.joinable()) I.agents[c].os.join();
  }
  if (!error && I.result.completed) {
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

  std::lock_guard lk(I.m);
  Result out = std::move(I.result);
  out.seconds = I.seconds();
  for (int c : I.controlled) out.threads.push_back(I.agents[c].name);
  for (const Runtime::Impl::Agent& a : I.agents)
    if (a.foreign) out.foreign.push_back(a.name);
  return out;
}

}  // namespace racelab::live
