#pragma once
// The engine: runs one execution of a subject under a strategy on a chosen backend.
//
//   loop: enabled := threads whose pending operation can take effect
//         none enabled -> finished (every non-daemon thread done) or deadlock (report the cycle)
//         t := strategy.pick(enabled); apply t's operation; run t to its next scheduling point
//
// The loop is sched::decide_loop (decide.h), the one the live runtime runs too; this engine is
// its simulated world. Checkers sit in the loop: deadlock (above), the step limit (livelock), and,
// inside the Execution, data races and assertions. A fatal finding ends the execution after its
// step.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sched/context.h"
#include "sched/execution.h"
#include "sched/strategy.h"

namespace racelab::sched {

enum class Backend { kCoroutine, kThreads };

// A program racelab controls. setup() creates the primitives and spawns the threads of one
// execution; it is called afresh for every execution, so subjects keep no state between them
// except through the Context.
class Subject {
 public:
  virtual ~Subject() = default;
  virtual std::string name() const = 0;
  // Changes whenever the subject's behaviour changes; schedule files record it.
  virtual std::string content_hash() const = 0;
  virtual void setup(Context& ctx) = 0;
  // After an execution whose threads all finished: final invariant checks.
  virtual void finish(Context& /*ctx*/) {}
};

struct RunOptions {
  Backend backend = Backend::kCoroutine;
  std::uint64_t max_steps = 1'000'000;  // more steps than this: a livelock finding
};

struct ExecutionResult {
  std::unique_ptr<Execution> exec;  // final state: steps, findings, notes, names
  std::uint64_t preemptions = 0;
  std::vector<std::uint64_t>
      preemption_steps;    // the steps that switched away from a runnable thread
  bool completed = false;  // every non-daemon thread finished
  // The strategy stopped the execution early (Strategy::pick returned kNoThread): dpor found
  // that every way on is equivalent to an execution it explores anyway.
  bool abandoned = false;

  const std::vector<Finding>& findings() const { return exec->findings(); }
  bool found(std::string_view kind) const { return exec->has_finding(kind); }
  // The trace as text, one "step thread: operation" line per step; byte-identical for the same
  // subject, strategy and seed.
  std::string trace_text() const;
  // The thread chosen at each step: what GuidedStrategy and shrinking consume.
  std::vector<ThreadId> choices() const;
};

// Runs execution number `index`; nullopt when the strategy has nothing left to explore.
std::optional<ExecutionResult> run_execution(Subject& subject, Strategy& strategy,
                                             std::uint64_t index, const RunOptions& options = {});

}  // namespace racelab::sched
