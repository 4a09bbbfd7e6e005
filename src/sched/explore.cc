#include "sched/explore.h"

#include <chrono>

#include "sched/shrink.h"

namespace racelab::sched {

const char* stop_reason_name(StopReason r) {
  switch (r) {
    case StopReason::kBudget:
      return "budget";
    case StopReason::kExhausted:
      return "exhausted";
    case StopReason::kTimeLimit:
      return "time_limit";
    case StopReason::kInterrupted:
      return "interrupted";
  }
  return "?";
}

const FoundKind* ExploreResult::find(std::string_view kind) const {
  for (const FoundKind& f : found) {
    if (f.finding.kind == kind) return &f;
  }
  return nullptr;
}

ExploreResult explore(Subject& subject, const ExploreOptions& options) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(clock::now() - t0).count(); };
  auto strategy = make_strategy(options.strategy);
  ExploreResult out;
  out.strategy = strategy->describe();
  auto last_progress = t0;

  for (std::uint64_t i = 0;; ++i) {
    if (i >= options.iterations) {
      out.stop = StopReason::kBudget;
      break;
    }
    if (options.interrupt != nullptr && options.interrupt->load(std::memory_order_relaxed)) {
      out.stop = StopReason::kInterrupted;
      break;
    }
    if (options.time_limit_s > 0 && elapsed() >= options.time_limit_s) {
      out.stop = StopReason::kTimeLimit;
      break;
    }
    auto run = run_execution(subject, *strategy, i, options.run);
    if (!run) {
      out.stop = StopReason::kExhausted;
      break;
    }
    ++out.executions;
    out.steps += run->exec->steps().size();
    std::vector<Finding> fresh;
    for (const Finding& f : run->findings()) {
      if (out.find(f.kind) == nullptr) fresh.push_back(f);
    }
    if (!fresh.empty()) {
      const std::vector<ThreadId> choices = run->choices();
      for (std::size_t k = 0; k < fresh.size(); ++k) {
        FoundKind fk;
        fk.finding = fresh[k];
        fk.execution = i;
        fk.preemptions = fk.original_preemptions = run->preemptions;
        if (k + 1 == fresh.size()) {
          fk.result = std::move(*run);
        } else {  // several kinds in one execution: each keeps its own copy (a guided re-run)
          GuidedStrategy again(choices);
          fk.result = std::move(*run_execution(subject, again, 0, options.run));
        }
        out.found.push_back(std::move(fk));
      }
    }
    if (options.progress && clock::now() - last_progress > std::chrono::milliseconds(100)) {
      last_progress = clock::now();
      options.progress({out.executions, options.iterations, out.found.size(), elapsed()});
    }
  }
  if (options.shrink) {
    for (FoundKind& fk : out.found) {
      ShrinkResult s = shrink(subject, fk.result.choices(), fk.finding.kind, options.run);
      fk.result = std::move(s.result);
      fk.preemptions = fk.result.preemptions;
      for (const Finding& f : fk.result.findings()) {
        if (f.kind == fk.finding.kind) fk.finding = f;
      }
    }
  }
  out.seconds = elapsed();
  if (options.progress)
    options.progress({out.executions, options.iterations, out.found.size(), out.seconds});
  return out;
}

}  // namespace racelab::sched
