#pragma once
// Live subjects: real code on real OS threads under racelab's scheduler.
//
// A live subject spawns *controlled* threads (plain functions, not coroutines). Each controlled
// thread runs only while it holds the scheduler's token; it gives the token back at every
// scheduling point: locking or unlocking an instrumented mutex, `point("name")`, an access to a
// shared variable, spawning or joining, and returning from a blocking call. The engine then waits
// until the system is quiet and lets the strategy pick the next thread among those whose pending
// operation can take effect, exactly as for simulated subjects, so the same strategies, schedule
// files and checkers apply.
//
// Real programs also have threads racelab did not create (LibTorch's autograd device workers,
// CUDA's own threads). They are *foreign*: they run freely, but their operations on instrumented
// primitives are recorded (they take and release mutexes for real, waiting if needed) and they
// appear in the wait-for graph. A controlled thread that calls into code which may wait for a
// foreign thread marks the call with a `Blocking` scope, naming the thread that serves it; while
// inside, the thread is *away*: the engine does not wait for it, and a hang report draws the edge
// "inside <call>, served by <thread>".
//
// Daemon threads (spawn's `daemon`) are Python's: the execution is over once every non-daemon
// controlled thread has finished, as a Python process exits once its main thread (which waits for
// the non-daemon threads) is done; daemon threads still parked then are stopped where they are,
// blocked or not, and get no further step. A deadlock needs an unfinished non-daemon thread.
//
// Hang detection: when no controlled thread can make progress (none enabled, or the running one
// never comes back to a scheduling point) for `Options::hang_timeout`, the execution ends with a
// `deadlock` finding (naming the wait-for cycle) or a `hang` finding. Threads stuck in real
// blocking calls cannot be unwound; the runtime keeps them (and itself) alive, and the caller is
// expected to write its results and exit the process.
//
// Primitives belong to one execution's Runtime (made in Subject::setup); point() and Blocking are
// no-ops outside a live execution, so instrumented helpers also run on their own.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sched/finding.h"
#include "sched/op.h"
#include "sched/record.h"
#include "sched/strategies/strategies.h"
#include "sched/strategy.h"

namespace racelab::live {

using sched::ThreadId;

class Runtime;

namespace kinds {
using sched::kinds::kHang;         // no progress, but no wait-for cycle to name (sched/kinds.h)
using sched::kinds::kLostControl;  // a controlled thread never came back to a scheduling point
}  // namespace kinds

struct Options {
  // No progress for this long is a hang. It must exceed the longest real call a thread makes
  // between two scheduling points (a kernel compile, a backward pass).
  std::chrono::milliseconds hang_timeout{10000};
  // A decision waits for quiescence (runtime.cc: nothing outside the engine's control under way),
  // not for time. The one case racelab cannot see through: a thread still inside a blocking call
  // whose serving thread waits on an instrumented mutex (the call may have been served already);
  // there the engine also waits until nothing has happened for this long (0: not at all), and
  // counts the decision in Result::settled.
  std::chrono::milliseconds settle{5};
  // A wait-for cycle that runs through a blocking call (to the foreign thread serving it) and
  // stays unchanged, with nothing happening anywhere, for this long is reported as a deadlock at
  // once instead of after `hang_timeout`: no thread in it can move without another in it moving
  // first. (The hang timeout still applies where no cycle can be named.)
  std::chrono::milliseconds cycle_confirm{2000};
  // A thread about to be handed the turn (and the engine waiting for a thread to come back) spins
  // this long before it sleeps on a condition variable: a switch is then a few cache-line
  // transfers instead of two futex wake-ups. 0: sleep at once (no CPU spent on waiting).
  std::chrono::microseconds spin{50};
  std::uint64_t max_steps = 100000;  // more decisions than this: a livelock finding
  // false: the same threads and primitives without the scheduler, as a baseline for overhead
  // measurements. Scheduling points do not park, mutexes are plain locks, nothing is recorded or
  // checked, and the strategy is not consulted; only hang detection remains.
  bool control = true;
  // Record each step's footprint for partial-order reduction (--strategy dpor): the operation's
  // object, what foreign threads did while the step ran, the points' order (docs/live.md,
  // "Proofs"). Off, the runtime shows strategies no operations (FootprintView::pending_op is
  // nullptr), as the sampling strategies expect of a live subject.
  bool footprints = false;
};

// An instrumented mutex; BasicLockable, so std::lock_guard and std::unique_lock work.
//
// A *Python lock* (Runtime::python_lock) has the semantics of CPython's `_thread.lock`, from which
// threading builds Condition, Event, Semaphore, Barrier and queue.Queue: any thread may release
// it, and a thread that acquires it while holding it waits until another thread releases it
// (that is how Condition.wait parks a waiter). `waits_for` says, in words, what a thread blocked
// in lock() waits for ("an item from Queue at train.py:20"); reports use it.
class Mutex {
 public:
  void lock() { lock_waiting_for({}); }
  void lock_waiting_for(std::string waits_for);
  // A scheduling point that never waits: takes the mutex if it is free (or held by this thread
  // and recursive) when the scheduler runs it, and says whether it did.
  bool try_lock();
  void unlock();
  const std::string& name() const { return name_; }
  bool recursive() const { return recursive_; }
  bool python_lock() const { return python_lock_; }
  bool waiter() const { return waiter_; }
  bool locked() const;

  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

 private:
  friend class Runtime;
  Mutex(Runtime* rt, int id, std::string name, bool recursive, bool python_lock, bool waiter)
      : rt_(rt),
        id_(id),
        name_(std::move(name)),
        recursive_(recursive),
        python_lock_(python_lock),
        waiter_(waiter) {}
  Runtime* rt_;
  int id_;
  std::string name_;
  bool recursive_;
  bool python_lock_;
  bool waiter_;
};

// A shared variable checked for data races: every get() and set() is a scheduling point, and two
// accesses (one a write) of different threads not ordered by happens-before are a data_race
// finding. The value itself is accessed under the runtime's lock, so foreign threads may use it.
class SharedVar {
 public:
  virtual ~SharedVar() = default;  // the runtime owns Shared<T> through SharedVar
  const std::string& name() const { return name_; }

 protected:
  friend class Runtime;
  SharedVar(Runtime* rt, int id, std::string name) : rt_(rt), id_(id), name_(std::move(name)) {}
  void access(bool write, const std::function<void()>& touch);
  Runtime* rt_;
  int id_;
  std::string name_;
};

template <class T>
class Shared : public SharedVar {
 public:
  T get() {
    T out{};
    access(false, [&] { out = value_; });
    return out;
  }
  void set(T v) {
    access(true, [&] { value_ = std::move(v); });
  }

 private:
  friend class Runtime;
  Shared(Runtime* rt, int id, std::string name, T init)
      : SharedVar(rt, id, std::move(name)), value_(std::move(init)) {}
  T value_;
};

// What a scheduling point stands for, for partial-order reduction (--strategy dpor): a read or a
// write of a named piece of the program's state ("compile cache", a dict). Two points conflict
// when one writes what the other reads or writes. A point that declares nothing writes "the
// program's state", as every other point that declares nothing does: such points are ordered
// against each other (runtime_threads.cc, footprints).
struct PointAccess {
  std::string object;
  bool write = false;
  bool awaited = false;  // a read the point waited for (sched::Touch::awaited; a guarded point)
};

// A user-defined scheduling point (controlled threads); recorded as an event for foreign threads.
// `accesses`: what it stands for (PointAccess); none: an access to the whole program state.
void point(std::string_view label, std::vector<PointAccess> accesses = {});

// A *guarded* point: enabled only while the execution's counter `counter` (count() below) is at
// least `at_least`. Python's queues, events, semaphores and barriers are built on them
// (racelab_sync.py): a get from a queue waits at one until the queue holds an item, and its step
// then takes the item, so that one synchronisation operation is one step whose footprint says
// what it reads and writes of the object (an item, a token, an epoch), not a series of lock
// operations. `waits_for` says in words what a thread blocked there waits for.
struct Guard {
  std::string counter;
  std::int64_t at_least = 1;
  std::string waits_for;
};
void point(std::string_view label, std::vector<PointAccess> accesses, Guard guard);
// Adds `delta` to the execution's counter `counter` (0 until first changed), which guarded points
// read. Not a scheduling point: a controlled thread changes counters in the local code of its
// step, before its next point, so that every decision sees them as that step left them.
void count(std::string_view counter, std::int64_t delta);
// Declares an access of the step running now (the calling controlled thread's last step, or for
// a foreign thread, the step under way) that only its local code could tell: which item a get
// took. Part of that step's footprint for dpor (Options::footprints); nothing else reads it.
void touch(std::string_view object, bool write, bool awaited = false);

// Marks a call that may wait for another thread outside racelab's control. `served_by` names the
// thread that does the work (as named by name_this_thread), so that a hang report can close the
// wait-for cycle through it. Leaving the scope is a scheduling point.
class Blocking {
 public:
  explicit Blocking(std::string what, std::string served_by = {});
  ~Blocking();
  Blocking(const Blocking&) = delete;
  Blocking& operator=(const Blocking&) = delete;

 private:
  Runtime* rt_;
  ThreadId id_;
};

// Names the calling foreign thread in traces and reports ("autograd worker cuda:0"). Controlled
// threads keep the name they were spawned with.
void name_this_thread(std::string name);
// True on a controlled thread of the running execution.
bool controlled();
// Spawns a controlled thread; from setup or from a controlled thread. A `daemon` thread does not
// keep the execution going (see the top of this file).
ThreadId spawn(std::string name, std::function<void()> body, bool daemon = false);
// Waits for a controlled thread to finish (a scheduling point, enabled once it has).
void join(ThreadId t);

// A program racelab runs on real threads (its name and hash: sched::SubjectBase, sched/record.h).
class Subject : public sched::SubjectBase {
 public:
  // Creates the primitives and spawns the first controlled threads of one execution.
  virtual void setup(Runtime& rt) = 0;
  // After an execution whose threads all finished.
  virtual void finish(Runtime& /*rt*/) {}
  // When an execution hangs, before its parked threads are unwound: the moment to record what
  // every thread was doing (the Python bridge keeps every thread's stack).
  virtual void stuck() {}
};

struct Event {
  std::string thread;
  std::string text;
  bool foreign = false;   // done by a foreign thread: recorded, not chosen
  bool decision = false;  // a step the strategy chose (what schedule files replay)
  double seconds = 0;     // wall time since the execution started
  // The shared resource it acts on, by a key stable across executions (a hash of its family and
  // name; 0: none, as for points), and whether it writes it (lock, unlock, write) or only reads
  // it (read, join, a busy try lock): what the interleaving-class fingerprint reads.
  std::uint64_t resource = 0;
  bool write = false;
};

// One live execution: the record both kinds of execution keep (sched/record.h: findings, the
// thread picked at each decision, preemptions and their decisions, completed), and what only a
// real one has.
struct Result : sched::ExecutionRecord {
  std::vector<Event> events;  // decisions and foreign operations, in the order they took effect
  std::vector<std::string> threads;  // controlled threads, by id
  std::vector<std::string> foreign;  // foreign threads, in order of first appearance
  bool hung = false;  // threads were left stuck in real calls; the process should exit soon
  // Decisions taken after a quiet period of Options::settle rather than at quiescence alone (a
  // thread inside a blocking call whose server waited: runtime.cc, World::ready). 0: every
  // decision of this execution was taken at quiescence, whatever the machine's load.
  std::uint64_t settled = 0;
  // The subject recorded every thread's stack (Subject::stuck) before the execution was unwound:
  // it hung, or it was not deterministic.
  bool stacks = false;
  double seconds = 0;

  // The decisions as schedule files record them (thread, operation), as sched::replay_steps
  // gives a model execution's.
  std::vector<sched::ReplayStep> replay_steps() const;
};

// The interleaving class of a live execution: the per-resource hand-off order of its events
// (sched::handoff_fingerprint), threads named by their names.
std::uint64_t handoff_fingerprint(const Result& r);

// Runs execution number `index` of `subject` under `strategy`; nullopt when the strategy has
// nothing left to explore. One live execution runs at a time in a process.
std::optional<Result> run(Subject& subject, sched::Strategy& strategy, std::uint64_t index,
                          const Options& options = {});

// The runtime of the execution in progress (nullptr outside one): what language bridges use to
// create primitives during an execution.
Runtime* active_runtime();
// A number that identifies the execution in progress (0 outside one): primitives a bridge keeps
// across executions check that they still belong to the current one.
std::uint64_t execution_serial();
// True once the execution of the calling thread is over and its threads are being unwound: a
// bridge that sees an error coming out of foreign code at that point need not report it.
bool stopping();

// Waits until every controlled thread of the executions that hung has finished (after whatever
// they were stuck on let go of them, e.g. a test cancelling its fake worker); false on timeout.
bool wait_hung_threads(std::chrono::milliseconds timeout);

class Runtime final : public sched::ThreadView, public sched::FootprintView {
 public:
  // ---- Setup (and, for spawn, from controlled threads).
  Mutex& mutex(std::string name) { return make_mutex(std::move(name), false); }
  Mutex& recursive_mutex(std::string name) { return make_mutex(std::move(name), true); }
  // A lock with CPython's `_thread.lock` semantics (see Mutex). `waiter`: the lock
  // Condition.wait parks on; its waiter holds it, but reports do not list it as held.
  Mutex& python_lock(std::string name, bool waiter = false) {
    return make_mutex(std::move(name), false, true, waiter);
  }
  template <class T>
  Shared<T>& shared(std::string name, T init = T{}) {
    auto* v = new Shared<T>(this, next_var_id(), std::move(name), std::move(init));
    adopt_var(std::unique_ptr<SharedVar>(v));
    return *v;
  }
  ThreadId spawn(std::string name, std::function<void()> body, bool daemon = false);
  // Records a finding; `fatal` ends the execution at the next decision. `stack`: a Python
  // exception's traceback, outermost first.
  void report(std::string kind, std::string message, bool fatal = false,
              std::vector<sched::StackFrame> stack = {});
  // Ends the execution at the next decision without a finding (the program ended itself:
  // os._exit(0) in a Python script).
  void end_execution();
  void note(std::string text);  // shown on the timeline; not a scheduling point
  // The execution's number in its search (run's `index`): what reports written from inside the
  // execution (a crash's) call it.
  std::uint64_t execution_index() const;

  // ---- ThreadView (controlled threads only).
  std::size_t thread_count() const override;
  const std::string& thread_name(ThreadId t) const override;
  bool finished(ThreadId t) const override;
  std::string pending_text(ThreadId t) const override;
  const sched::FootprintView* footprints() const override { return this; }
  // With Options::footprints (dpor): the steps' footprints (runtime_threads.cc says what they
  // are); after the last decision, the threads as they were then, not as they wound down.
  const sched::Op* pending_op(ThreadId t) const override;
  std::int64_t step_result(std::uint64_t step) const override;
  std::span<const sched::Touch> step_touches(std::uint64_t step) const override;
  // A thread left blocked at a guarded point at the end: that point's accesses.
  std::span<const sched::Touch> pending_touches(ThreadId t) const override;
  bool ended_by_finding() const override;
  // Threads are spawned as the program runs: dpor sizes its clocks for this many.
  std::size_t thread_capacity() const override { return kMaxFootprintThreads; }
  static constexpr std::size_t kMaxFootprintThreads = 64;

  ~Runtime();

 private:
  friend class Mutex;
  friend class SharedVar;
  friend class Blocking;
  friend std::optional<Result> run(Subject&, sched::Strategy&, std::uint64_t, const Options&);
  friend void point(std::string_view, std::vector<PointAccess>);
  friend void point(std::string_view, std::vector<PointAccess>, Guard);
  friend void count(std::string_view, std::int64_t);
  friend void touch(std::string_view, bool, bool);
  friend void name_this_thread(std::string);
  friend bool controlled();
  friend ThreadId live::spawn(std::string, std::function<void()>, bool);
  friend void join(ThreadId);
  friend bool wait_hung_threads(std::chrono::milliseconds);
  friend bool stopping();
  struct Impl;

  explicit Runtime(const Options& options);
  Mutex& make_mutex(std::string name, bool recursive, bool python_lock = false,
                    bool waiter = false);
  int next_var_id();
  void adopt_var(std::unique_ptr<SharedVar> v);

  std::unique_ptr<Impl> impl_;
};

}  // namespace racelab::live
