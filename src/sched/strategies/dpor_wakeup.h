#pragma once
// Wakeup trees: what makes dpor optimal (Abdulla, Aronis, Jonsson, Sagonas, "Source Sets: A
// Foundation for Optimal Dynamic Partial Order Reduction", JACM 64(4), 2017, section 6).
//
// Source-set dpor remembers, at the node before a race's first event, one *thread* that can start
// the reversed execution; the execution it then runs from there is arbitrary and may end in a
// sleep-set blocked (redundant) execution. Optimal dpor remembers the *sequence* that reverses the
// race, v = notdep(e).e' (the events after e that do not happen after it, then e'), and runs it
// first. A node's wakeup tree is an ordered forest of such sequences sharing prefixes; its leaves
// are the beginnings of executions still to explore from the node, in order.
//
// Inserting v (insert[E](v, wut)) walks down from the root: a child whose thread p is a *weak
// initial* of what is left of v (p's first event in it has no happens-before predecessor in it, or
// p has no event in it and p's next event is independent of all of it) is followed, with p's event
// taken out of v; when v is used up, an execution that the tree will run already covers v's
// class; otherwise what is left of v is added as the last child of the node reached, a leaf too
// (the JACM insert stops at a leaf, which is sound only where every footprint in the tree is
// exact: dpor_wakeup.cc). Before inserting, a race whose sequence has a weak initial asleep at the
// node is skipped: that class is explored elsewhere. Every race of each complete execution is
// inserted so, those of the replayed prefix too (JACM 2017, Algorithm 2): v holds the events
// after e' as well, which differ between executions that share the prefix.
//
// An event's footprint (dpor_events.h) decides independence. A sequence's last event can be a
// *pending* operation (a thread blocked at the end, or stopped by a fatal step) whose local code
// never ran: its footprint is unknown and counts as dependent with everything (it happens after
// every event of the sequence), which can only add a sequence, never lose one.
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "sched/strategies/dpor_events.h"

namespace racelab::sched::dpor {

// One event of a sequence to insert: its thread, footprint and happens-before clock (as in the
// execution it comes from: clock[u] = how many of u's events happen before it, its own
// included), and its index among its thread's events.
struct SequenceEvent {
  ThreadId thread = kNoThread;
  std::uint32_t local = 0;
  bool known = true;  // false: a pending operation, footprint unknown
  std::vector<Access> footprint;
  Clock clock;
  // Where the footprint is unknown: what the event touched in the execution the sequence came
  // from, a guess for looking ahead (speculate.h), never for independence.
  std::vector<Access> guess;
};
using Sequence = std::vector<SequenceEvent>;

// notdep(race.earlier).race.later of `log`'s whole execution (call it once the execution has
// ended); the race's later thread's pending operation is the last event when race.later is
// pending. `later_op`: the later event's operation; `outlook`: what the later step declared it
// may touch or fail with elsewhere, where the subject vouches that a step's touches follow from
// its operation up to that (FootprintView::touches_fixed, step_outlook); nullptr otherwise.
Sequence reversal(const EventLog& log, const Race& race, const Op* later_op,
                  const StepOutlook* outlook);

// The footprint race.later's step has when it runs again after `before` (the sequence's events
// up to it) instead of after race.earlier: its own accesses (a submit's job renamed by its new
// place in its queue), the touches it made and those it declared it may make, and a fatal access
// where it was fatal or may be. False when that cannot be known from the step (a symmetry status,
// a take that found its queue closed). An over-approximation: dpor checks it when the step runs
// (covers).
bool predict_reversed(const EventLog& log, const Race& race, const Op& op,
                      const StepOutlook& outlook, const Sequence& before, std::vector<Access>& out);
// True when access `a` is one of `predicted` (a read where a write of its variable is).
bool covers(std::span<const Access> predicted, const Access& a);

// A thread asleep at a node of the search, and its next event's footprint as explored there.
struct Sleeper {
  ThreadId thread = kNoThread;
  std::span<const Access> footprint;
};

struct WakeupNode {
  ThreadId thread = kNoThread;
  bool known = true;
  std::vector<Access> footprint;
  std::vector<WakeupNode> children;
  std::vector<Access> guess;  // SequenceEvent::guess
};

// An ordered forest: the sequences to explore from one node of the search, first child first.
class WakeupTree {
 public:
  bool empty() const { return children_.empty(); }
  std::size_t size() const { return children_.size(); }
  const std::vector<WakeupNode>& children() const { return children_; }
  // Inserts `v` (see above); false when the tree already covers it.
  bool insert(Sequence v);
  // A one-event sequence of thread t, footprint unknown, unless some child already starts with t.
  void add_thread(ThreadId t);
  // Takes out the first child: its thread, and the tree below it (the wakeup tree of the node
  // that running that thread reaches); `predicted`, when given, gets the child's footprint where
  // it is known (empty optional where not); `guess`, when given, the footprint where it is known,
  // else its guess (SequenceEvent::guess).
  ThreadId take_first(WakeupTree& below, std::optional<std::vector<Access>>* predicted = nullptr,
                      std::vector<Access>* guess = nullptr);
  // Drops the first-level children every one of whose sequences a thread asleep at the node
  // starts (a weak initial of it, with the footprint its next event had when it was explored
  // there): those classes are explored from the sleeper. The JACM invariant keeps such sequences
  // out of the tree, but a sequence inserted while a sibling's footprint was unknown (a pending
  // operation: a thread blocked at the end of an execution) can break it once that sibling has
  // run and sleeps: it then runs into an execution where every enabled thread is asleep
  // (1 GPU x 3 drafters, no warmup, 1 step: 378 of 22,743 executions).
  void drop_covered(std::span<const Sleeper> sleepers);
  void assign(std::vector<WakeupNode> children) { children_ = std::move(children); }
  void clear() { children_.clear(); }

 private:
  std::vector<WakeupNode> children_;
};

// True when thread p, whose next event has `footprint` (`known`: false when unknown), is a weak
// initial of `v`; on true, `at` is p's first event in v, or nullopt when p has none there.
bool weak_initial(const Sequence& v, ThreadId p, std::span<const Access> footprint, bool known,
                  std::optional<std::size_t>& at);

// True when thread p, asleep with its next event's exact `footprint`, is a weak initial of `v`:
// as weak_initial, or p's event in v is reached with nothing before it in v that conflicts with
// `footprint` (then it is that very event, whatever footprint v predicted for it).
bool sleeper_initial(const Sequence& v, ThreadId p, std::span<const Access> footprint);

// The second rule of sleeper_initial on reversal(log, race) without building it (dpor.cc checks
// it first, every race of every execution being reversed): true when p's event in the sequence
// comes with nothing before it that conflicts with `footprint`.
bool sleeper_starts(const EventLog& log, const Race& race, ThreadId p,
                    std::span<const Access> footprint);

}  // namespace racelab::sched::dpor
