#pragma once
// The world-independent half of a decision loop, shared by the model's engine (engine.cc, over a
// simulated Execution) and the live runtime (src/live/runtime.cc, over real threads): the step
// limit and its livelock message, the Decision a strategy sees, the pick and its invariant (the
// strategy chose an enabled thread; checked in every build type), preemption counting, and the
// wait-for cycle search behind every deadlock message. Each world says what is enabled, applies
// the chosen step and resumes the thread; nothing here knows how.
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

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
  // `may_abandon`), counted as a preemption where it is one. kNoThread: the strategy abandons the
  // execution (dpor's sleep sets; only model subjects can be abandoned).
  ThreadId pick(const Decision& d, bool may_abandon);

  ThreadId previous() const { return previous_; }
  std::uint64_t preemptions() const { return preemption_steps_.size(); }
  const std::vector<std::uint64_t>& preemption_steps() const { return preemption_steps_; }

 private:
  Strategy& strategy_;
  std::uint64_t max_;
  ThreadId previous_ = kNoThread;
  std::vector<std::uint64_t> preemption_steps_;
};

// The first wait-for cycle among threads 0..n-1, each waiting for at most one other:
// `waits_for(t)` (-1: none), `finished(t)`, and `may_start(t)` (the threads a search starts
// from). It follows each start's edges in id order; the first thread seen twice closes the cycle,
// returned from that thread on. Empty when there is none.
std::vector<int> find_wait_cycle(int n, const std::function<int(int)>& waits_for,
                                 const std::function<bool(int)>& finished,
                                 const std::function<bool(int)>& may_start);

// "deadlock: A holds x and waits for y; B holds y and waits for x", from each cycle member's text.
std::string deadlock_message(const std::vector<std::string>& waits);
// The deadlock where no thread can run and no wait-for cycle can be named (an event never set, a
// Condition nobody notifies): "deadlock: no thread can run: " and what the stuck threads wait
// for, "; "-separated (the model names the first, the live runtime every controlled one).
std::string stuck_deadlock_message(const std::vector<std::string>& waits);
// A thread's wait for a lock that another holds, in both worlds' words: "waits for compile_lock
// held by drafter 1". `what`: the lock (or what the live bridge says its waiter waits for).
std::string held_wait_text(std::string_view what, std::string_view owner);

}  // namespace racelab::sched
