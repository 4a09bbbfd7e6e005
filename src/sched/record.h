#pragma once
// What model and live subjects have in common, so that nothing about them is said twice:
//
// - SubjectBase: a subject's identity, the name and the content hash a schedule file records.
//   The model's sched::Subject (engine.h, set up over a simulated Context) and the live
//   live::Subject (live/live.h, set up over a real Runtime) add how one execution starts and
//   ends in their world.
// - ExecutionRecord: what one execution did, in the decision core's terms: its findings, the
//   thread picked at each decision, its preemptions and whether it ran to its end. The model's
//   sched::ExecutionResult and the live live::Result extend it with what only their world has
//   (the simulated Execution; the real events, threads and a hang). decide_execution
//   (decide.h) fills the decisions' part alike for both.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sched/finding.h"
#include "sched/strategy.h"

namespace racelab::sched {

class SubjectBase {
 public:
  virtual ~SubjectBase() = default;
  virtual std::string name() const = 0;
  // Changes whenever the subject's behaviour changes; schedule files record it, and a replay
  // against another hash warns (live) or replays as far as the steps apply (model).
  virtual std::string content_hash() const = 0;
};

struct ExecutionRecord {
  std::vector<Finding> findings;  // in the order they were found
  // The thread picked at each decision: what GuidedStrategy, shrinking and rerunning consume.
  std::vector<ThreadId> choices;
  std::uint64_t preemptions = 0;
  std::vector<std::uint64_t> preemption_steps;  // the decisions that switched away from a
                                                // runnable thread (preemptions of them)
  // Every non-daemon thread finished (live: daemon threads still running were stopped) and no
  // finding ended the execution early.
  bool completed = false;

  bool found(std::string_view kind) const {
    return std::any_of(findings.begin(), findings.end(),
                       [&](const Finding& f) { return f.kind == kind; });
  }
};

}  // namespace racelab::sched
