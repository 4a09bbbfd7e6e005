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
#include "sched/record.h"
#include "sched/strategy.h"

namespace racelab::sched {

enum class Backend { kCoroutine, kThreads };

// A program racelab simulates (its name and hash: SubjectBase, record.h). setup() creates the
// primitives and spawns the threads of one execution; it is called afresh for every execution,
// so subjects keep no state between them except through the Context.
class Subject : public SubjectBase {
 public:
  virtual void setup(Context& ctx) = 0;
  // After an execution whose threads all finished: final invariant checks.
  virtual void finish(Context& /*ctx*/) {}
};

struct RunOptions {
  Backend backend = Backend::kCoroutine;
  std::uint64_t max_steps = 1'000'000;  // more steps than this: a livelock finding
};

// One model execution: the record both kinds of execution keep (record.h; its findings are the
// Execution's, `choices` the thread of each step), and the simulated final state.
struct ExecutionResult : ExecutionRecord {
  std::unique_ptr<Execution> exec;  // final state: steps, findings, notes, names
  // The strategy stopped the execution early (Strategy::pick returned kNoThread): dpor found
  // that every way on is equivalent to an execution it explores anyway.
  bool abandoned = false;

  ExecutionResult() = default;
  ExecutionResult(ExecutionResult&&) = default;
  ExecutionResult& operator=(ExecutionResult&&) = default;
  // Hands the Execution back for the next run_execution on this thread to reuse (its buffers).
  ~ExecutionResult();

  // The trace as text, one "step thread: operation" line per step; byte-identical for the same
  // subject, strategy and seed.
  std::string trace_text() const;
};

// Runs execution number `index`; nullopt when the strategy has nothing left to explore.
std::optional<ExecutionResult> run_execution(Subject& subject, Strategy& strategy,
                                             std::uint64_t index, const RunOptions& options = {});

}  // namespace racelab::sched
