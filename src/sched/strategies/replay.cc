// Replay as a checked prefix, and the guided strategy used by shrinking.
#include <fmt/format.h>

#include <algorithm>

#include "sched/strategies/strategies.h"

namespace racelab::sched {

ReplayDivergence::ReplayDivergence(std::uint64_t step_, std::string expected, std::string got)
    : StrategyError(fmt::format("diverged at step {}: expected {}, got {}", step_, expected, got)),
      step(step_) {}

ReplayStrategy::ReplayStrategy(std::vector<ReplayStep> steps, OnDivergence on_divergence,
                               std::unique_ptr<Strategy> fallback)
    : steps_(std::move(steps)), on_divergence_(on_divergence), fallback_(std::move(fallback)) {}

bool ReplayStrategy::begin_execution(std::uint64_t index) {
  diverged_at_.reset();
  divergence_.clear();
  if (fallback_) fallback_->begin_execution(index);
  return true;
}

ThreadId ReplayStrategy::pick(const Decision& d) {
  if (!diverged_at_ && d.step < steps_.size()) {
    const ReplayStep& want = steps_[d.step];
    const ThreadView& exec = *d.exec;
    std::string got;
    ThreadId named = kNoThread;
    for (ThreadId t = 0; t < static_cast<ThreadId>(exec.thread_count()); ++t) {
      if (exec.thread_name(t) == want.thread) named = t;
    }
    if (named == kNoThread) {
      got = fmt::format("no thread named '{}'", want.thread);
    } else {
      const std::string op = exec.pending_text(named);
      const bool enabled = std::find(d.enabled.begin(), d.enabled.end(), named) != d.enabled.end();
      if (enabled && op == want.op) return named;
      if (exec.finished(named)) {
        got = fmt::format("{} has finished", want.thread);
      } else if (op != want.op) {
        got = fmt::format("{}: {}", want.thread, op);
      } else {
        got = fmt::format("{}: {} (blocked)", want.thread, op);
      }
    }
    ReplayDivergence divergence(d.step, fmt::format("{}: {}", want.thread, want.op), got);
    if (on_divergence_ == OnDivergence::kFail) throw divergence;
    diverged_at_ = d.step;
    divergence_ = divergence.what();
  }
  if (fallback_) return fallback_->pick(d);
  return d.previous_enabled ? d.previous : d.enabled.front();
}

std::optional<ThreadId> ReplayStrategy::awaited(const Decision& d) const {
  if (diverged_at_ || d.step >= steps_.size()) return std::nullopt;
  const ReplayStep& want = steps_[d.step];
  for (ThreadId t = 0; t < static_cast<ThreadId>(d.exec->thread_count()); ++t) {
    if (d.exec->thread_name(t) != want.thread) continue;
    if (d.exec->finished(t)) return std::nullopt;
    const bool enabled = std::find(d.enabled.begin(), d.enabled.end(), t) != d.enabled.end();
    if (!enabled && d.exec->pending_text(t) == want.op) return t;
    return std::nullopt;
  }
  return std::nullopt;
}

std::string ReplayStrategy::describe() const {
  return fmt::format("replay({} steps{})", steps_.size(),
                     fallback_ ? ", then " + fallback_->describe() : std::string());
}

ThreadId GuidedStrategy::pick(const Decision& d) {
  if (d.step < choices_.size()) {
    const ThreadId want = choices_[d.step];
    if (std::find(d.enabled.begin(), d.enabled.end(), want) != d.enabled.end()) return want;
  }
  return d.previous_enabled ? d.previous : d.enabled.front();
}

}  // namespace racelab::sched
