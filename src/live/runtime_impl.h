#pragma once
// The live runtime's private state (Runtime::Impl), shared by the files that implement live.h:
//
//   runtime.cc             the engine: run()'s decision loop, wind-down, results
//   runtime_threads.cc     thread and primitive bookkeeping: agents, operations, parking, spawn
//   runtime_primitives.cc  the instrumented primitives: Mutex, SharedVar, point, Blocking, join
//   runtime_stuck.cc       the wait-for graph and the deadlock, hang and lost-control reports
//
// All state sits behind one std::mutex (Impl::state_mutex). A controlled thread parks at a
// scheduling point by recording its pending operation and waiting on its own condition variable
// until the engine has applied that operation and handed it the token. The engine thread waits on
// engine_cv for "activity" (a counter bumped by every park, foreign operation, finish and blocking
// call), which is how it notices the running thread coming back and foreign threads acting.
//
// Every member of Impl is read and written with state_mutex held, except `wake`, which waiters
// spin on with the lock released. Nothing here is part of racelab's API: include live/live.h.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "live/live.h"
#include "sched/race.h"
#include "sched/strategy.h"
#include "util/hash.h"

namespace racelab::live {

namespace internal {

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

// Defined in runtime.cc. constinit: no thread-local initialisation wrapper on each access.
extern thread_local constinit Runtime* tl_rt;
// The calling thread's agent in tl_rt, when it is controlled (-1 otherwise).
extern thread_local constinit int tl_agent;
extern std::atomic<Runtime*> g_active;
extern std::atomic<std::uint64_t> g_serial;  // executions started in this process

// Runtimes left with threads stuck in real calls: never destroyed, since those threads may still
// wake up and touch them.
extern std::mutex g_graveyard_mutex;
extern std::vector<std::shared_ptr<Runtime>> g_graveyard;

// A controlled thread's pending operation, in the scheduler's vocabulary (sched::OpKind); the
// live runtime uses kStart, kLock, kTryLock, kUnlock, kRead, kWrite, kJoin, kReturn and kPoint.
using sched::OpKind;
struct Pending {
  OpKind kind = OpKind::kStart;
  int object = -1;
  std::string label;
  std::vector<PointAccess> accesses;  // a point's (live.h)
  int guard = -1;                     // a guarded point's counter (Impl::counters), or -1
  std::int64_t at_least = 0;
  std::string waits_for;  // a guarded point's: what a thread blocked there waits for
};

enum class State {
  kAtPoint,   // controlled, parked at a scheduling point with a pending operation
  kRunning,   // controlled, holds the token
  kAway,      // controlled, inside a Blocking call
  kFinished,  // controlled, its body returned
  kFree,      // foreign, not waiting on an instrumented mutex
  kWaiting,   // foreign, waiting for an instrumented mutex
};

inline void clock_join(VClock& into, const VClock& from) {
  if (into.size() < from.size()) into.resize(from.size(), 0);
  for (std::size_t i = 0; i < from.size(); ++i) into[i] = std::max(into[i], from[i]);
}

inline std::uint32_t clock_at(const VClock& c, int i) {
  return i < static_cast<int>(c.size()) ? c[i] : 0;
}

}  // namespace internal

struct Runtime::Impl {
  using OpKind = sched::OpKind;
  using Pending = internal::Pending;
  using State = internal::State;
  using SteadyClock = internal::SteadyClock;
  using VClock = internal::VClock;

  // A thread the runtime knows: controlled (spawned through it) or foreign (met at an
  // instrumented operation). Agents are numbered in order of appearance.
  struct Agent {
    std::string name;
    sched::Op op;  // the pending operation in dpor's terms (footprint_op), with footprints on
    bool foreign = false;
    bool daemon = false;             // controlled threads: does not keep the execution going
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
    // Its number in footprints (Options::footprints): by its name, the thread that created it and
    // how many mutexes of that name that thread had created before, so that two locks made at one
    // line (each Thread's, each Condition.wait's waiter) are two objects, and one lock is the same
    // object in every execution whose creating thread took the same path.
    std::int32_t footprint = -1;
  };
  struct VarState {
    std::unique_ptr<SharedVar> obj;
    sched::RaceState race;
    std::int32_t footprint = -1;  // its number in footprints (Options::footprints): by its name
  };

  // What dpor reads of an executed step (Options::footprints; runtime_threads.cc).
  struct Step {
    sched::Op op;
    std::int64_t result = 0;  // a try lock: 1 when it took the mutex
    std::vector<sched::Touch> touches;
  };
  // The threads as the last decision saw them (finished, pending operation), for a strategy's
  // end_execution, which runs after they wound down.
  struct Final {
    bool finished = true;
    sched::Op op;
    std::vector<sched::Touch> blocked;  // blocked at a guarded point: its accesses
  };

  Options options;
  std::uint64_t index = 0;  // run()'s
  std::mutex state_mutex;
  std::condition_variable engine_cv;
  std::condition_variable mutex_cv;  // foreign threads waiting for a mutex
  std::deque<Agent> agents;          // stable addresses
  std::vector<int> controlled;       // ThreadId -> agent
  std::unordered_map<std::thread::id, int> foreign_by_os;
  std::vector<MutexState> mutexes;
  std::vector<VarState> vars;
  // Guarded points' counters (live.h, count), by name; 0 until first changed.
  std::unordered_map<std::string, int> counter_ids;
  std::vector<std::int64_t> counters;
  int counter_id(std::string_view name) {
    const auto [it, fresh] = counter_ids.try_emplace(std::string(name), 0);
    if (fresh) {
      it->second = static_cast<int>(counters.size());
      counters.push_back(0);
    }
    return it->second;
  }
  Result result;
  std::vector<Step> steps;  // with Options::footprints: every decision's step, in order
  std::unordered_map<std::uint64_t, std::uint32_t> created;  // mutexes by (creator, name)
  std::vector<Final> finals;  // set once decisions are over (decide_until_end)
  bool decided = false;
  std::uint64_t activity = 0;
  std::uint64_t decisions = 0;
  bool aborting = false;
  bool fatal = false;
  // wind_down found threads that did not unwind after an execution that had not hung (one dpor
  // abandoned, or one that ended at an exception): report_stuck recorded them then.
  bool stuck_at_end = false;
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
          internal::cpu_relax();
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
  // `resource`: resource_key(...) of what the event acts on (0: none).
  void record(int agent, std::string text, bool decision, std::uint64_t resource = 0,
              bool write = false) {
    Agent& a = agents[agent];
    a.last = text;
    result.events.push_back(
        Event{a.name, std::move(text), a.foreign, decision, seconds(), resource, write});
  }
  // A resource's key for Event::resource: its family and name, hashed (ids are per execution and
  // in creation order; names are what stays the same from one execution to the next).
  static std::uint64_t resource_key(std::string_view family, std::string_view name) {
    return fnv1a64(name, fnv1a64(family)) | 1;  // never 0
  }
  // What a controlled thread's pending operation acts on, for record(); `took`: a try lock got
  // the mutex (a busy one only looked: a read, as for foreign threads).
  std::pair<std::uint64_t, bool> access_of(const Pending& p, bool took) const {
    switch (p.kind) {
      case OpKind::kLock:
      case OpKind::kUnlock:
        return {resource_key("mutex", mutexes[p.object].obj->name()), true};
      case OpKind::kTryLock:
        return {resource_key("mutex", mutexes[p.object].obj->name()), took};
      case OpKind::kRead:
      case OpKind::kWrite:
        return {resource_key("var", vars[p.object].obj->name()), p.kind == OpKind::kWrite};
      case OpKind::kJoin:
        return {resource_key("thread", agents[controlled[p.object]].name), false};
      default:  // start, points, returns: no shared resource
        break;
    }
    return {0, false};
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

  // ---- What the engine asks before each decision (inline: called per thread per decision).
  bool can_take(const MutexState& mx, int agent) const {
    return mx.owner == -1 || (mx.owner == agent && mx.obj->recursive());
  }

  bool enabled(int agent) const {
    const Agent& a = agents[agent];
    if (a.state != State::kAtPoint) return false;
    switch (a.pending.kind) {
      case OpKind::kLock:
        return can_take(mutexes[a.pending.object], agent);
      case OpKind::kJoin:
        return agents[controlled[a.pending.object]].state == State::kFinished;
      case OpKind::kPoint:
        return a.pending.guard < 0 || counters[a.pending.guard] >= a.pending.at_least;
      default:
        return true;
    }
  }

  bool all_finished() const {
    for (int c : controlled)
      if (agents[c].state != State::kFinished) return false;
    return true;
  }
  // The end of the program: every non-daemon controlled thread has finished (live.h, daemons).
  bool non_daemons_finished() const {
    for (int c : controlled)
      if (!agents[c].daemon && agents[c].state != State::kFinished) return false;
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
  // Whether `agent`, a controlled thread inside a blocking call, waits for something only a
  // decision can change: the thread serving the call (Blocking's `served_by`, by name) waits for an
  // instrumented mutex, or is itself inside a call whose server does. False when the server is
  // unknown (it never touched an instrumented object) or runs: then the call may still return.
  bool away_blocked(int agent) const {
    for (std::size_t hops = 0; hops <= agents.size(); ++hops) {
      const Agent& a = agents[agent];
      if (a.state != State::kAway || a.away.empty() || a.away.back().second.empty()) return false;
      const int s = agent_named(a.away.back().second);
      if (s < 0 || s == agent) return false;
      if (agents[s].state == State::kWaiting) return true;
      if (agents[s].state != State::kAway) return false;
      agent = s;
    }
    return false;
  }
  // Whether `agent`, inside a blocking call, is certainly still in it: its call's server waits for
  // an instrumented mutex and no other controlled thread is inside a call to that server. A server
  // takes one call at a time and blocks only inside one (its calls come from controlled threads'
  // blocking calls); the caller of a call already served has come back, so with one caller left
  // the call the server blocks in is that caller's, not yet served (issue 34: a decision then
  // waits for no quiet period). With two or more, the server may block in the second's call
  // while the first, served, is on its way back, which racelab cannot see.
  bool away_certain(int agent) const {
    const Agent& a = agents[agent];
    if (a.state != State::kAway || a.away.empty() || a.away.back().second.empty()) return false;
    const std::string& server = a.away.back().second;
    const int s = agent_named(server);
    if (s < 0 || s == agent || agents[s].state != State::kWaiting) return false;
    for (int c : controlled) {
      const Agent& o = agents[c];
      if (c == agent || o.state != State::kAway) continue;
      for (const auto& call : o.away)
        if (call.second == server) return false;
    }
    return true;
  }
  // Quiescence, what a decision waits for instead of a quiet period (docs/live.md, "Determinism"):
  // nothing outside the engine's control is under way. Every thread inside a blocking call has
  // come back or waits, through the thread serving it, on an instrumented mutex; no foreign thread
  // holds an instrumented mutex while it runs (it will release it or wait for another); no foreign
  // thread waits for a mutex that is free (it is about to take it). `server_blocked` is set when
  // a thread is still inside a call whose server waits and other threads are inside calls to the
  // same server (away_certain): the call may have been served already, its thread on its way
  // back, which racelab cannot see (the one place a quiet period remains).
  bool quiescent(bool& server_blocked) const {
    server_blocked = false;
    for (int c : controlled) {
      if (agents[c].state != State::kAway) continue;
      if (!away_blocked(c)) return false;
      if (!away_certain(c)) server_blocked = true;
    }
    for (const MutexState& mx : mutexes)
      if (mx.owner >= 0 && agents[mx.owner].foreign && agents[mx.owner].state == State::kFree)
        return false;
    for (std::size_t i = 0; i < agents.size(); ++i) {
      const Agent& a = agents[i];
      if (a.foreign && a.state == State::kWaiting &&
          can_take(mutexes[a.waiting_mutex], static_cast<int>(i)))
        return false;
    }
    return true;
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

  // ---- The engine (runtime.cc).
  // The real world of sched::decide_loop: this state, its waits for threads racelab does not
  // control, and its application of a chosen step.
  class World;
  // Runs decisions until the execution ends (state_mutex held through `lk`); true when it hung,
  // leaving threads in real calls. `view` is the Runtime, as strategies see it.
  bool decide_until_end(sched::Strategy& strategy, const Runtime& view,
                        std::unique_lock<std::mutex>& lk);
  // Ends the execution: unwinds the threads parked at scheduling points and, when they do not all
  // finish (within cycle_confirm while they wait in a cycle, else within the hang timeout; or
  // `hung` already), detaches them; threads found stuck only here are reported (report_stuck,
  // stuck_at_end). Sets result.hung and result.completed (`failed`: the engine threw); returns
  // whether the execution hung.
  bool wind_down(bool hung, bool failed);

  // ---- Footprints for dpor (runtime_threads.cc).
  // `p` as a footprint operation: its object numbered by its name (footprint_id).
  sched::Op footprint_op(const Pending& p) const;
  // The step just applied for controlled `agent` (its op, result, touches).
  void note_step(int agent);
  // A foreign thread's (agent `foreign`) operation while the last step ran, part of that step's
  // footprint: on the variable `var`, else (-1) a point; and a write of the thread as a server
  // (note_call).
  void note_foreign(int foreign, int var, bool write = true,
                    const std::vector<PointAccess>* point = nullptr);
  // The same for a lock operation on `mutex` (an index into mutexes): dpor orders it as a lock
  // operation (sched::TouchMutex).
  void note_foreign_mutex(int foreign, int mutex, sched::TouchMutex op);
  // The running step enters a blocking call served by the thread named `server`: a read of that
  // thread as a server, so that the step depends on every step in which the server acted.
  void note_call(std::string_view server);
  // A server's number in footprints: its name's (footprint_id), as a variable.
  static std::int32_t server_id(std::string_view server);
  // A point's footprint (PointAccess) as touches.
  void point_touches(const std::vector<PointAccess>& accesses, std::vector<sched::Touch>& out);
  // An access the running step's local code declares (live.h, touch).
  void note_touch(std::string_view object, bool write, bool awaited);

  // ---- Bookkeeping and operations (runtime_threads.cc).
  int add_agent(std::string name, bool foreign);
  // The calling thread's agent as a foreign thread, registering it on first use.
  int foreign_self();
  std::string op_text(const Pending& p) const;
  void release_mutex(int agent, int id);
  void check_access(int agent, VarState& v, bool write);
  // Performs controlled agent's pending operation and hands it the token.
  void apply(int agent);
  // Options::control == false: performs a scheduling point's operation at once, as plain code.
  void free_op(std::unique_lock<std::mutex>& lk, int agent, const Pending& p);
  // Parks the calling controlled thread at a scheduling point until the engine applies `p`.
  void park(std::unique_lock<std::mutex>& lk, int agent, Pending p);

  // ---- Reports (runtime_stuck.cc).
  // "holds compile_lock and " for an agent holding mutexes (waiter locks not listed), else "".
  std::string holds_text(int agent) const;
  int agent_named(const std::string& name) const;
  // What `agent` waits for, and the agent it waits on (-1: none known). `timed` adds how long.
  std::pair<std::string, int> wait_of(int agent, bool timed = false) const;
  // A cycle in the wait-for graph (lock owners, joined threads, the threads serving blocking
  // calls), starting at its first controlled thread so that it reads the same however the
  // foreign threads were numbered; empty when there is none.
  std::vector<int> find_cycle() const;
  // A wait-for cycle (find_cycle) that nothing can break while no decision is taken: every
  // thread in it that is inside a blocking call is certainly still in it (away_certain), and the
  // others wait for mutexes (or, at a scheduling point, for a mutex or a join; not while the
  // execution unwinds, `unwinding`, when parked threads leave their points and release what they
  // hold). Such a cycle is a deadlock at once, without waiting --cycle-confirm-ms for it to hold
  // still: no thread in it can move before another in it does.
  bool certain_cycle(const std::vector<int>& cycle, bool unwinding) const;
  // Records the deadlock, lost_control or hang finding of an execution that cannot go on.
  // `settled`: no controlled thread can run and nothing outside the engine's control can change
  // that (no thread is inside a blocking call, no foreign thread holds or waits for a mutex or has
  // ever released a Python lock), so the threads wait for each other even where no single
  // wait-for cycle can be named (Condition waits name no waker). `hang_reason`: why the execution
  // hangs, should it be a hang ("no progress for 10.0 s"); its message is then "hang: <reason>:
  // <the first stuck thread>", so that a hang is never worded as a deadlock.
  void report_stuck(std::string_view hang_reason, bool settled = false);
  // Records the `nondeterministic` finding of a decision that met other enabled threads than the
  // same schedule prefix met before (sched::Nondeterminism), with every thread's state and the
  // likely cause, and ends the execution (fatal).
  void report_nondeterminism(const sched::Nondeterminism& e);
};

}  // namespace racelab::live
