#pragma once
// The decision core, shared by the model's engine (engine.cc, over a simulated Execution) and the
// live runtime (src/live/runtime.cc, over real threads): the decision loop (decide_loop), the step
// limit and its livelock message, the Decision a strategy sees, the pick and its invariant (the
// strategy chose an enabled thread; checked in every build type), preemption counting, and the
// wait-for cycle search behind every deadlock message. Each world says what is enabled, applies
// the chosen step and resumes the thread (the World of decide_loop); nothing here knows how.
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sched/finding.h"
#include "sched/record.h"
#include "sched/strategy.h"

namespace racelab::sched {

class Decider {
 public:
  Decider(Strategy& strategy, std::uint64_t max_steps) : strategy_(strategy), max_(max_steps) {}

  // The livelock finding's message once `step` reaches the limit; nullopt before.
  std::optional<std::string> over_step_limit(std::uint64_t step) const;

  // The decision at `step` among `enabled` (ascending, not empty); `previous_enabled`: whether the
  // thread that took the last step could take this one (choosing another is then a preemption).
  Decision decision(std::span<const ThreadId> enabled, bool previous_enabled, std::uint64_t step,
                    const ThreadView& view) const;

  // The strategy's choice for `d`, checked (RACELAB_CHECK: an enabled thread, or kNoThread where
  // `may_abandon`), recorded, and counted as a preemption where it is one. kNoThread: the
  // strategy abandons the execution (dpor's sleep sets; only model subjects can be abandoned).
  ThreadId pick(const Decision& d, bool may_abandon);

  ThreadId previous() const { return previous_; }
  std::uint64_t preemptions() const { return preemption_steps_.size(); }
  const std::vector<std::uint64_t>& preemption_steps() const { return preemption_steps_; }
  // What was decided, moved into `record`: the choices, the preemptions and their steps.
  void record_into(ExecutionRecord& record);
  // Decides into the buffers of `record`'s vectors (emptied), where a caller kept them from an
  // earlier record (engine.cc), rather than growing new ones step by step.
  void reuse_buffers(ExecutionRecord& record);

 private:
  Strategy& strategy_;
  std::uint64_t max_;
  ThreadId previous_ = kNoThread;
  std::vector<ThreadId> choices_;
  std::vector<std::uint64_t> preemption_steps_;
};

// Why the decision loop ended.
enum class LoopEnd {
  kEnded,      // the world ended the execution: every thread done, stuck, stopped or hung
  kLivelock,   // the step limit (the world has recorded the livelock finding)
  kAbandoned,  // the strategy gave the execution up (kNoThread; model subjects only)
};

// The one decision loop of both worlds: the model's engine (engine.cc, over a simulated
// Execution) and the live runtime (src/live/runtime.cc, over real threads). At each step:
//
//   world.ready()          false: the execution has ended (the live runtime waits here for the
//                          running thread to come back, for foreign threads to settle, and ends
//                          at the program's end)
//   world.enabled()        the enabled threads, ascending
//   none enabled           world.none_enabled(): true to look again (the live runtime waits for
//                          a thread it does not control), false when the execution ended (a
//                          deadlock, a hang, or every thread done)
//   decision               previous thread enabled? world.is_enabled(t)
//   world.await(d)         true to look again: a replayed step the world must first catch up with
//   the step limit         world.livelock(message), LoopEnd::kLivelock
//   the pick               checked, preemptions counted (Decider::pick); kNoThread abandons
//   world.take(t)          apply t's pending operation and run t to its next scheduling point;
//                          false when that ended the execution (a fatal finding)
//
// `view`: the threads as strategies see them. The world owns everything world-specific; the
// loop, the step count, the limit and the pick are here alone.
template <class World>
LoopEnd decide_loop(World& world, Decider& decider, const ThreadView& view, bool may_abandon) {
  for (std::uint64_t step = 0;;) {
    if (!world.ready()) return LoopEnd::kEnded;
    const auto& enabled = world.enabled();
    if (enabled.empty()) {
      if (world.none_enabled()) continue;
      return LoopEnd::kEnded;
    }
    const ThreadId previous = decider.previous();
    const Decision d =
        decider.decision(enabled, previous != kNoThread && world.is_enabled(previous), step, view);
    if (world.await(d)) continue;
    if (auto livelock = decider.over_step_limit(step)) {
      world.livelock(std::move(*livelock));
      return LoopEnd::kLivelock;
    }
    const ThreadId t = decider.pick(d, may_abandon);
    if (t == kNoThread) return LoopEnd::kAbandoned;
    ++step;
    if (!world.take(t)) return LoopEnd::kEnded;
  }
}

// One execution's decisions, both worlds alike (engine.cc, src/live/runtime.cc): a Decider over
// `strategy` with the step limit `max_steps`, the loop (decide_loop), and what was decided put in
// `record` (Decider::record_into). The world fills the rest of the record (findings, completed).
// Each caller begins and ends the strategy's execution itself (Strategy::begin_execution,
// end_execution), since what lies between differs: the model ends it before its threads are torn
// down, so that the strategy sees the final state; the live runtime after its threads wound down.
template <class World>
LoopEnd decide_execution(World& world, Strategy& strategy, std::uint64_t max_steps,
                         const ThreadView& view, bool may_abandon, ExecutionRecord& record) {
  Decider decider(strategy, max_steps);
  decider.reuse_buffers(record);
  LoopEnd end;
  try {
    end = decide_loop(world, decider, view, may_abandon);
  } catch (...) {
    decider.record_into(record);  // the decisions taken so far: a report can still show them
    throw;
  }
  decider.record_into(record);
  return end;
}

// The first wait-for cycle among threads 0..n-1, each waiting for at most one other:
// `waits_for(t)` (-1: none), `finished(t)`, and `may_start(t)` (the threads a search starts
// from). It follows each start's edges in id order; the first thread seen twice closes the cycle,
// returned from that thread on. Empty when there is none.
std::vector<int> find_wait_cycle(int n, const std::function<int(int)>& waits_for,
                                 const std::function<bool(int)>& finished,
                                 const std::function<bool(int)>& may_start);

// "deadlock: A holds x and waits for y; B holds y and waits for x", from each cycle member's text.
std::string deadlock_message(const std::vector<std::string>& waits);
// A deadlock finding's cycle and message, both worlds alike, from a wait-for cycle
// (find_wait_cycle): `name(t)` each member's name, `wait(t)` its text in the message. Nothing for
// an empty cycle.
void describe_cycle(Finding& f, const std::vector<int>& cycle,
                    const std::function<std::string(int)>& name,
                    const std::function<std::string(int)>& wait);
// The deadlock where no thread can run and no wait-for cycle can be named (an event never set, a
// Condition nobody notifies): "deadlock: no thread can run: " and what the stuck threads wait
// for, "; "-separated (the model names the first, the live runtime every controlled one).
std::string stuck_deadlock_message(const std::vector<std::string>& waits);
// A thread's wait for a lock that another holds, in both worlds' words: "waits for compile_lock
// held by drafter 1". `what`: the lock (or what the live bridge says its waiter waits for).
std::string held_wait_text(std::string_view what, std::string_view owner);
// The locks a stuck thread holds, before its wait in both worlds' words: "holds compile_lock,
// cache_lock and" ("" for none).
std::string holds_text(const std::vector<std::string>& held);

}  // namespace racelab::sched
