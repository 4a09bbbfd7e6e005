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

namespace {
std::string named_set(const ThreadView* view, std::span<const ThreadId> threads) {
  std::vector<ThreadId> sorted(threads.begin(), threads.end());
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::string> labels;
  for (ThreadId t : sorted)
    labels.push_back(view != nullptr && t >= 0 && static_cast<std::size_t>(t) < view->thread_count()
                         ? view->thread_name(t)
                         : fmt::format("thread {}", t));
  return fmt::format("{} ({})", sorted.size(), fmt::join(labels, ", "));
}
}  // namespace

Nondeterminism::Nondeterminism(std::string_view strategy, const Decision& d,
                               std::span<const ThreadId> first, std::span<const ThreadId> now)
    : Nondeterminism(strategy, d.step, named_set(d.exec, first), named_set(d.exec, now)) {}

Nondeterminism::Nondeterminism(std::string_view strategy, std::uint64_t step, std::string first,
                               std::string now)
    : StrategyError(fmt::format("{}: the subject is not deterministic: step {} had {} enabled "
                                "threads when first explored and {} now",
                                strategy, step, first, now)),
      step_(step),
      first_(std::move(first)),
      now_(std::move(now)) {}

namespace {

// An Execution no result holds any more, reset, for the next run_execution on this thread: an
// exploration runs one execution after another, and building each afresh (its threads, objects,
// steps, names, waiter lists) cost more allocation than the run itself (docs/performance.md,
// "Against Relacy").
// The decisions' buffers go with it (Decider::reuse_buffers).
struct Spare {
  std::unique_ptr<Execution> exec;
  std::vector<ThreadId> choices;
  std::vector<std::uint64_t> preemption_steps;
};

Spare& spare() {
  thread_local Spare s;
  return s;
}

std::unique_ptr<Execution> fresh_execution(std::uint64_t max_steps) {
  if (auto exec = std::move(spare().exec)) {
    exec->reset(max_steps);
    return exec;
  }
  return std::make_unique<Execution>(max_steps);
}

}  // namespace

ExecutionResult::~ExecutionResult() {
  if (exec == nullptr) return;
  // Its coroutines go now, as they would with the Execution; the rest stays for the next run.
  exec->reset(exec->max_steps());
  Spare& s = spare();
  if (s.exec != nullptr) return;
  s.exec = std::move(exec);
  s.choices = std::move(choices);
  s.preemption_steps = std::move(preemption_steps);
}

std::string ExecutionResult::trace_text() const {
  std::string out;
  const auto& steps = exec->steps();
  for (std::size_t i = 0; i < steps.size(); ++i) {
    out += fmt::format("{} {}\n", i, exec->describe_step(steps[i]));
  }
  return out;
}

namespace {

// The simulated world of decide_loop (decide.h): the Execution, its threads resumed as
// coroutines or, on the thread backend, as OS threads handed the token.
class ModelWorld {
 public:
  ModelWorld(Execution& exec, ThreadBackend* threads) : exec_(exec), threads_(threads) {}

  bool ready() const { return true; }
  const std::vector<ThreadId>& enabled() const { return exec_.enabled(); }
  bool is_enabled(ThreadId t) const { return exec_.is_enabled(t); }
  // No thread can run: the end, or a deadlock (the wait-for cycle, or what the threads wait for).
  bool none_enabled() {
    if (!exec_.all_done()) exec_.check_deadlock();
    return false;
  }
  bool await(const Decision&) const { return false; }  // the simulation is never behind
  void livelock(std::string message) { exec_.report(kinds::kLivelock, std::move(message), true); }
  bool take(ThreadId t) {
    exec_.set_current(t);
    exec_.apply(t);
    if (exec_.stopped()) return false;
    if (threads_) {
      threads_->resume(t);
    } else {
      exec_.resume_point(t).resume();
    }
    return !exec_.stopped();
  }

 private:
  Execution& exec_;
  ThreadBackend* threads_;
};

}  // namespace

std::optional<ExecutionResult> run_execution(Subject& subject, Strategy& strategy,
                                             std::uint64_t index, const RunOptions& options) {
  if (!strategy.begin_execution(index)) return std::nullopt;
  ExecutionResult result;
  result.exec = fresh_execution(options.max_steps);
  // Empty buffers for the Decider (decide_execution).
  result.choices = std::move(spare().choices);
  result.choices.clear();
  result.preemption_steps = std::move(spare().preemption_steps);
  result.preemption_steps.clear();
  Execution& exec = *result.exec;
  exec.keep_states(strategy.needs().state_digests);
  std::unique_ptr<ThreadBackend> threads;
  if (options.backend == Backend::kThreads) threads = std::make_unique<ThreadBackend>(exec);
  Context ctx(exec, threads.get());
  subject.setup(ctx);
  if (threads) threads->start();

  ModelWorld world(exec, threads.get());
  try {
    // kNoThread from the strategy abandons a redundant execution (dpor: its sleep set).
    result.abandoned = decide_execution(world, strategy, options.max_steps, exec, true, result) ==
                       LoopEnd::kAbandoned;
  } catch (...) {
    if (threads) threads->teardown();
    strategy.end_execution();
    throw;
  }
  // Before the teardown, which finishes the threads it aborts: the strategy sees the final state.
  strategy.end_execution();
  if (threads) threads->teardown();
  result.completed = exec.all_done() && !exec.stopped();
  if (result.completed) {
    exec.set_current(kNoThread);
    subject.finish(ctx);
  }
  result.findings = exec.findings();
  return result;
}

}  // namespace racelab::sched
