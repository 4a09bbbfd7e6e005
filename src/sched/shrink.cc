#include "sched/shrink.h"

#include <fmt/format.h>

#include "sched/strategies/strategies.h"

namespace racelab::sched {
namespace {

ExecutionResult run_guided(Subject& subject, std::vector<ThreadId> choices,
                           const RunOptions& options) {
  GuidedStrategy guided(std::move(choices));
  return std::move(*run_execution(subject, guided, 0, options));
}

}  // namespace

ShrinkResult shrink(Subject& subject, const std::vector<ThreadId>& choices, const std::string& kind,
                    const RunOptions& options, int max_attempts) {
  ShrinkResult out;
  out.result = run_guided(subject, choices, options);
  if (!out.result.found(kind)) {
    throw StrategyError(fmt::format("shrink: the schedule does not reproduce {}", kind));
  }
  out.original_preemptions = out.result.preemptions;
  bool improved = true;
  while (improved && out.attempts < max_attempts && out.result.preemptions > 0) {
    improved = false;
    const std::vector<ThreadId> current = out.result.choices;
    const std::vector<std::uint64_t> points = out.result.preemption_steps;
    for (std::uint64_t at : points) {
      const ThreadId previous = current[at - 1];
      std::vector<ThreadId> follow(current);  // continue `previous`, then the original choices
      follow[at] = previous;
      std::vector<ThreadId> calm(current.begin(), current.begin() + static_cast<long>(at));
      for (auto* candidate : {&follow, &calm}) {
        if (out.attempts >= max_attempts) break;
        ++out.attempts;
        ExecutionResult r = run_guided(subject, *candidate, options);
        if (r.found(kind) && r.preemptions < out.result.preemptions) {
          out.result = std::move(r);
          improved = true;
          break;
        }
      }
      if (improved) break;
    }
  }
  return out;
}

}  // namespace racelab::sched
