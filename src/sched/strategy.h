#pragma once
// Strategy: who runs next. Every strategy implements three calls, as in shuttle: begin_execution
// (prepare execution i), pick (a thread among the enabled ones) and describe (its name and
// parameters, for reports). The other virtuals are optional capabilities whose defaults mean "not
// this strategy": end_execution (learn from the execution that ended), progress (how much of its
// space a searching strategy has covered: exhausted, classes, states), needs (what an execution
// must record for it), clone and calibration (split across workers and shards by execution index)
// and guided (a thread it insists on although it is not enabled: replay). Strategies never see a
// backend or a subject; they see a Decision. One strategy per file under strategies/.
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

// What partial-order reduction reads of an execution: each step's footprint (dpor, pos, surw,
// coverage). The simulated Execution records it; so does the live runtime, whose pending_op is
// nullptr where live::Options::footprints is off. Reached through ThreadView::footprints().
class FootprintView {
 public:
  // t's pending operation; nullptr when the view does not record footprints.
  virtual const Op* pending_op(ThreadId t) const = 0;
  // The result of executed step `step`: the job id of a submit or take (-1: the queue was closed
  // and drained), 0 for other operations.
  virtual std::int64_t step_result(std::uint64_t step) const = 0;
  // What executed step `step`'s local code touched beyond its operation's own object.
  virtual std::span<const Touch> step_touches(std::uint64_t step) const = 0;
  // What t's pending operation accesses when t is blocked on it (a live guarded point, live.h):
  // a thread left blocked at the end races with the last event that wrote what it reads or
  // writes (dpor_events.h, add_blocked). Empty when t is not blocked on a guarded point.
  virtual std::span<const Touch> pending_touches(ThreadId /*t*/) const { return {}; }
  // True when a fatal finding ended the execution after its last step (oom, assertion, ...).
  virtual bool ended_by_finding() const = 0;
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

 protected:
  ~FootprintView() = default;
};

// What the states strategy and dpor's state cache read: the execution's state, for a subject that
// describes it (state.h; the model). Reached through ThreadView::states().
class StateView {
 public:
  // A digest of the whole current state, alike threads renamed (state.h); nullopt where the
  // subject does not describe its state.
  virtual std::optional<std::uint64_t> state_digest() const = 0;
  // The same digest, and the renaming it chose: `canonical[t]` is thread t's number in it. Two
  // states with one digest are one up to the renaming that maps each thread of one to the thread
  // of the other with the same number (dpor's state cache compares sleep sets through it).
  virtual std::optional<std::uint64_t> named_state_digest(
      std::vector<ThreadId>& canonical) const = 0;
  // What a renaming of the digest (alike threads, alike parts: state.h) cannot change: two
  // threads, or two objects of one kind, that some renaming may exchange have one role. Without
  // parts or groups every thread and object is its own role.
  enum class Role : std::uint8_t { kThread, kMutex, kEvent, kQueue, kVar };
  virtual std::uint64_t role(Role what, std::int32_t id) const = 0;

 protected:
  ~StateView() = default;
};

// What a strategy may read about the threads of an execution: the simulated Execution and the live
// runtime (src/live) both provide it, so every strategy drives either. What only some strategies
// read sits behind two capability queries, asked once per decision, not per access.
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
  // Each step's footprint; nullptr where the subject records none.
  virtual const FootprintView* footprints() const { return nullptr; }
  // The execution's state; nullptr where the subject cannot describe one (live subjects).
  virtual const StateView* states() const { return nullptr; }

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

// What a strategy insists on beyond the enabled threads, for a guided strategy (replay): the
// live engine, where threads outside its control may still enable a thread, waits for that one
// first (Strategy::guided).
class Guided {
 public:
  // The thread the strategy insists on at this decision although it is not enabled; nullopt
  // where it insists on none.
  virtual std::optional<ThreadId> awaited(const Decision& d) const = 0;

 protected:
  ~Guided() = default;
};

class Strategy;

// Handing a search over to another process (a live search past a deadlock, whose threads stay
// stuck in this one: src/live/handover.h; Strategy::resumable).
class Resumable {
 public:
  // Between executions: moves the search on to its next execution and returns its whole state as
  // text; nullopt where it cannot now (the state cache, a split's part, a fixed prefix).
  virtual std::optional<std::string> hand_over() = 0;
  // Before the first execution of a strategy made with the same parameters in another process:
  // goes on from hand_over()'s text exactly as the first would have. false where it cannot;
  // throws InputError for text that is no such state.
  virtual bool take_over(const std::string& state) = 0;
  // Speculation (speculate.h), between executions. move_on(): moves the search on to its next
  // execution now, as hand_over() does (the next begin_execution() does not again); false when
  // nothing is left. state_text(): after move_on() or take_over(), the state hand_over() returns.
  // fork(): a copy that goes on as this one would. alternatives(): after move_on() or
  // take_over(), each alternative left above the next execution (the next at each node), which
  // alternative_state(node) gives as a search confined to that alternative's subtree.
  struct Alternative {
    std::size_t node = 0;
    std::vector<ThreadId> prefix;  // the choices to it, its own last
    std::string key;               // what else decides its search (its node's sleep set, ...)
    bool guessed = false;  // its sleep set holds a footprint guessed, not seen (dpor: first_new)
  };
  virtual bool move_on() { return false; }
  virtual std::optional<std::string> state_text() const { return std::nullopt; }
  // After move_on() or take_over(): the choices the next execution starts with (they are fixed).
  virtual std::vector<ThreadId> next_choices() const { return {}; }
  virtual std::unique_ptr<Strategy> fork() const { return nullptr; }
  virtual std::vector<Alternative> alternatives() { return {}; }
  virtual std::optional<std::string> alternative_state(std::size_t /*node*/) {
    return std::nullopt;
  }
  // Before the first execution, in the process of `from` (a search of the same parameters):
  // take_over(from.alternative_state(node)) without the text; false where it cannot.
  virtual bool take_over_alternative(Resumable& /*from*/, std::size_t /*node*/) { return false; }

 protected:
  ~Resumable() = default;
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  // Prepares execution number `index` (0-based). Returns false when the strategy has nothing left
  // to explore (DFS exhausted its bounded space).
  virtual bool begin_execution(std::uint64_t index) = 0;
  // One of d.enabled, or kNoThread to abandon the execution (dpor: sleep-set blocked).
  virtual ThreadId pick(const Decision& d) = 0;
  virtual void end_execution() {}

  // Interleaving classes (Mazurkiewicz traces) covered so far, for a strategy that knows them
  // (dpor): the executions that were the first of their class, and those it abandoned because
  // they could only repeat a class (sleep-set blocked).
  struct Classes {
    std::uint64_t classes = 0;
    std::uint64_t redundant = 0;
    std::uint64_t cached = 0;  // dpor's state cache: abandoned at a state explored before
  };
  // How far a strategy that searches a space has come; the defaults mean "a sampling strategy".
  struct Progress {
    bool exhausted = false;               // it has covered its whole space (dfs, dpor, states)
    std::optional<Classes> classes;       // the classes it has covered (dpor)
    std::optional<std::uint64_t> states;  // the distinct states it has explored (states, dpor)
  };
  virtual Progress progress() const { return {}; }
  bool exhausted() const { return progress().exhausted; }
  std::optional<Classes> classes() const { return progress().classes; }
  std::optional<std::uint64_t> states() const { return progress().states; }

  // What an execution must record for the strategy beyond its threads and their pending text.
  struct Needs {
    // StateView::state_digest and the rest of the state view (states; dpor with its state
    // cache): an execution records what its threads see, which costs every step.
    bool state_digests = false;
  };
  virtual Needs needs() const { return {}; }

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
  // The strategy's guidance, where it insists on threads (replay); nullptr for the others.
  virtual const Guided* guided() const { return nullptr; }
  // The strategy's hand-over, where a search can go on in another process (dpor); nullptr for
  // the others.
  virtual Resumable* resumable() { return nullptr; }
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
