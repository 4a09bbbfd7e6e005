#include "sched/engine.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "sched/decide.h"
#include "sched/thread_backend.h"
#include "util/check.h"

namespace racelab::sched {

std::string thread_label(const ThreadView& view, ThreadId t) {
  if (t == kNoThread) return "none (kNoThread)";
  if (t < 0 || static_cast<std::size_t>(t) >= view.thread_count())
    return fmt::format("{} (no such thread)", t);
  return fmt::format("{} ({})", t, view.thread_name(t));
}

std::string enabled_labels(const Decision& d) {
  std::vector<std::string> labels;
  for (ThreadId t : d.enabled) labels.push_back(thread_label(*d.exec, t));
  return fmt::format("{}", fmt::join(labels, ", "));
}

std::string ExecutionResult::trace_text() const {
  std::string out;
  const auto& steps = exec->steps();
  for (std::size_t i = 0; i < steps.size(); ++i) {
    out += fmt::format("{} {}\n", i, exec->describe_step(steps[i]));
  }
  return out;
}

std::vector<ThreadId> ExecutionResult::choices() const {
  std::vector<ThreadId> out;
  out.reserve(exec->steps().size());
  for (const Step& s : exec->steps()) out.push_back(s.thread);
  return out;
}

std::optional<ExecutionResult> run_execution(Subject& subject, Strategy& strategy,
                                             std::uint64_t index, const RunOptions& options) {
  if (!strategy.begin_execution(index)) return std::nullopt;
  ExecutionResult result;
  result.exec = std::make_unique<Execution>(options.max_steps);
  Execution& exec = *result.exec;
  std::unique_ptr<ThreadBackend> threads;
  if (options.backend == Backend::kThreads) threads = std::make_unique<ThreadBackend>(exec);
  Context ctx(exec, threads.get());
  subject.setup(ctx);
  if (threads) threads->start();

  Decider decider(strategy, options.max_steps);
  try {
    for (std::uint64_t step = 0;; ++step) {
      const std::vector<ThreadId>& enabled = exec.enabled();
      if (enabled.empty()) {
        if (!exec.all_done()) exec.check_deadlock();
        break;
      }
      if (auto livelock = decider.over_step_limit(step)) {
        exec.report(kinds::kLivelock, *livelock, true);
        break;
      }
      const ThreadId previous = decider.previous();
      const Decision d =
          decider.decision(enabled, previous != kNoThread && exec.is_enabled(previous), step, exec);
      const ThreadId t = decider.pick(d, true);
      if (t == kNoThread) {  // the strategy abandons a redundant execution (dpor: sleep set)
        result.abandoned = true;
        break;
      }
      exec.set_current(t);
      exec.apply(t);
      if (exec.stopped()) break;
      if (threads) {
        threads->resume(t);
      } else {
        exec.resume_point(t).resume();
      }
      if (exec.stopped()) break;
    }
  } catch (...) {
    if (threads) threads->teardown();
    strategy.end_execution();
    throw;
  }
  result.preemptions = decider.preemptions();
  result.preemption_steps = decider.preemption_steps();
  // Before the teardown, which finishes the threads it aborts: the strategy sees the final state.
  strategy.end_execution();
  if (threads) threads->teardown();
  result.completed = exec.all_done() && !exec.stopped();
  if (result.completed) {
    exec.set_current(kNoThread);
    subject.finish(ctx);
  }
  return result;
}

}  // namespace racelab::sched
