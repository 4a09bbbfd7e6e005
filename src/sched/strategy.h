#pragma once
// Strategy: who runs next. Every strategy implements three calls, as in shuttle: begin_execution
// (prepare execution i), pick (a thread among the enabled ones) and describe (its name and
// parameters, for reports). The other virtuals are optional capabilities whose defaults mean "not
// this strategy": end_execution (learn from the execution that ended), exhausted (the whole space
// is covered: dfs), classes (interleaving classes covered: dpor), clone and calibration (split
// across workers and shards by execution index) and awaited (a thread it insists on although it
// is not enabled: replay). Strategies never see a backend or a subject; they see a Decision. One
// strategy per file under strategies/.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "sched/op.h"

namespace racelab::sched {

// What a strategy may read about the threads of an execution: the simulated Execution and the live
// runtime (src/live) both provide it, so every strategy drives either.
class ThreadView {
 public:
  virtual std::size_t thread_count() const = 0;
  // How many threads the execution may have in all: thread_count() for a subject whose threads
  // all exist from its first step; more for one that spawns threads as it runs (a live program).
  // A thread t >= thread_count() not spawned yet is finished() as far as a strategy can tell.
  virtual std::size_t thread_capacity() const { return thread_count(); }
  virtual const std::string& thread_name(ThreadId t) const = 0;
  virtual bool finished(ThreadId t) const = 0;
  // The text of t's pending operation, as schedule files record it.
  virtual std::string pending_text(ThreadId t) const = 0;

  // ---- What partial-order reduction (dpor) reads: each step's footprint. The simulated
  // Execution records it; the live runtime does not, and keeps these defaults.
  // t's pending operation; nullptr when the view does not record footprints.
  virtual const Op* pending_op(ThreadId /*t*/) const { return nullptr; }
  // The result of executed step `step`: the job id of a submit or take (-1: the queue was closed
  // and drained), 0 for other operations.
  virtual std::int64_t step_result(std::uint64_t /*step*/) const { return 0; }
  // What executed step `step`'s local code touched beyond its operation's own object.
  virtual std::span<const Touch> step_touches(std::uint64_t /*step*/) const { return {}; }
  // What t's pending operation accesses when t is blocked on it (a live guarded point, live.h):
  // a thread left blocked at the end races with the last event that wrote what it reads or
  // writes (dpor_events.h, add_blocked). Empty when t is not blocked on a guarded point.
  virtual std::span<const Touch> pending_touches(ThreadId /*t*/) const { return {}; }
  // True when a fatal finding ended the execution after its last step (oom, assertion, ...).
  virtual bool ended_by_finding() const { return false; }
  // True when the execution has taken as many steps as it may (the livelock check).
  virtual bool step_limit_reached() const { return false; }
  // True when the subject vouches that what a step's local code touches depends on its operation
  // and its thread's past alone, except what the step declares it may touch or fail with where it
  // sees other values (Context::fix_touches, step_outlook): optimal dpor then knows the footprint
  // of a reversed step before it runs again (dpor_wakeup.h).
  virtual bool touches_fixed() const { return false; }
  // What executed step `step` declared it may do where it sees other values: the touches its
  // other branches make (Context::may_touch) and whether one ends the run with a fatal finding
  // (Context::may_fail). Read only where touches_fixed().
  virtual StepOutlook step_outlook(std::uint64_t /*step*/) const { return {}; }
  // t's symmetry group, or -1. Threads of one group run the same code and every other thread
  // treats them alike (up to renaming what belongs to each): dpor's symmetry reduction
  // (dpor.cc) explores one of two such threads that have done and seen the same.
  virtual int symmetry_group(ThreadId /*t*/) const { return -1; }
  // A digest of the whole current state, alike threads renamed (state.h), for the states
  // strategy; nullopt where the subject does not describe its state (and for live subjects).
  virtual std::optional<std::uint64_t> state_digest() const { return std::nullopt; }
  // The same digest, and the renaming it chose: `canonical[t]` is thread t's number in it. Two
  // states with one digest are one up to the renaming that maps each thread of one to the thread
  // of the other with the same number (dpor's state cache compares sleep sets through it).
  virtual std::optional<std::uint64_t> named_state_digest(std::vector<ThreadId>& canonical) const {
    canonical.clear();
    return state_digest();
  }
  // What a renaming of the digest (alike threads, alike parts: state.h) cannot change: two
  // threads, or two objects of one kind, that some renaming may exchange have one role. Without
  // parts or groups every thread and object is its own role.
  enum class Role : std::uint8_t { kThread, kMutex, kEvent, kQueue, kVar };
  virtual std::uint64_t role(Role /*what*/, std::int32_t id) const {
    return static_cast<std::uint64_t>(id);
  }

 protected:
  ~ThreadView() = default;
};

struct Decision {
  std::span<const ThreadId> enabled;  // ascending, never empty
  ThreadId previous = kNoThread;      // the thread that took the last step
  bool previous_enabled = false;      // choosing another thread now is a preemption
  std::uint64_t step = 0;
  const ThreadView* exec = nullptr;  // names and pending operations, for replay and diagnostics
};

// For error messages about a decision: "1 (drafter 1)", also for an id that names no thread of
// `view` ("7 (no such thread)", "none (kNoThread)").
std::string thread_label(const ThreadView& view, ThreadId t);
// The enabled threads of `d`, labelled: "0 (main), 2 (drafter 1)". d.exec must be set.
std::string enabled_labels(const Decision& d);

class Strategy {
 public:
  virtual ~Strategy() = default;
  // Prepares execution number `index` (0-based). Returns false when the strategy has nothing left
  // to explore (DFS exhausted its bounded space).
  virtual bool begin_execution(std::uint64_t index) = 0;
  // One of d.enabled, or kNoThread to abandon the execution (dpor: sleep-set blocked).
  virtual ThreadId pick(const Decision& d) = 0;
  virtual void end_execution() {}
  // True once the strategy has covered its whole space (only DFS can say so).
  virtual bool exhausted() const { return false; }
  // Interleaving classes (Mazurkiewicz traces) covered so far, for a strategy that knows them
  // (dpor): the executions that were the first of their class, and those it abandoned because
  // they could only repeat a class (sleep-set blocked). nullopt for the others.
  struct Classes {
    std::uint64_t classes = 0;
    std::uint64_t redundant = 0;
    std::uint64_t cached = 0;  // dpor's state cache: abandoned at a state explored before
  };
  virtual std::optional<Classes> classes() const { return std::nullopt; }
  // Distinct states explored so far, for a strategy that counts them (states); nullopt otherwise.
  virtual std::optional<std::uint64_t> states() const { return std::nullopt; }
  // True for a strategy that reads ThreadView::state_digest (states): only then does an execution
  // record what its threads see, which costs every step.
  virtual bool reads_states() const { return false; }
  // For reports: e.g. "pct(depth=3, seed=1)".
  virtual std::string describe() const = 0;
  // A copy with the same parameters and learned state, for another worker: execution i of the copy
  // is execution i of the original. nullptr when the strategy cannot be split that way (DFS splits
  // its tree instead, replay and guided strategies do not split).
  virtual std::unique_ptr<Strategy> clone() const { return nullptr; }
  // How many first executions a split exploration runs in order, on one thread, before it deals out
  // the rest: what the strategy learns from them (pct: the execution length; surw: each thread's
  // events) is what clone() carries, so execution i is the same on every worker and shard.
  virtual std::uint64_t calibration() const { return 0; }
  // A thread the strategy insists on at this decision although it is not enabled (replay). The
  // live engine, where threads outside its control may still enable it, waits for that first.
  virtual std::optional<ThreadId> awaited(const Decision& /*d*/) const { return std::nullopt; }
};

// Thrown by a strategy that cannot continue an execution (replay divergence, nondeterminism).
class StrategyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Thrown by a strategy that re-enters a decision it explored before (dfs, dpor, states) and meets
// other enabled threads than it did then: the subject is not deterministic. A model subject never
// is (a bug in racelab); a live one is when something racelab cannot see changed the world between
// two decisions, which the live engine reports as a `nondeterministic` finding (sched/kinds.h).
class Nondeterminism : public StrategyError {
 public:
  // `first`: the threads enabled when the decision was first explored, `now` those enabled now
  // (the strategy's view of d.enabled); d.exec names them.
  Nondeterminism(std::string_view strategy, const Decision& d, std::span<const ThreadId> first,
                 std::span<const ThreadId> now);
  std::uint64_t step() const { return step_; }
  // "2 (drafter 0.0, drafter 0.1)": the enabled threads then and now, named.
  const std::string& first() const { return first_; }
  const std::string& now() const { return now_; }

 private:
  Nondeterminism(std::string_view strategy, std::uint64_t step, std::string first, std::string now);
  std::uint64_t step_;
  std::string first_, now_;
};

}  // namespace racelab::sched
