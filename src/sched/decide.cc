#include "sched/decide.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "util/check.h"

namespace racelab::sched {

std::optional<std::string> Decider::over_step_limit(std::uint64_t step) const {
  if (step < max_) return std::nullopt;
  return fmt::format("livelock: no end after {} steps; threads keep running without finishing",
                     max_);
}

Decision Decider::decision(std::span<const ThreadId> enabled, bool previous_enabled,
                           std::uint64_t step, const ThreadView& view) const {
  Decision d;
  d.enabled = enabled;
  d.previous = previous_;
  d.previous_enabled = previous_ != kNoThread && previous_enabled;
  d.step = step;
  d.exec = &view;
  return d;
}

ThreadId Decider::pick(const Decision& d, bool may_abandon) {
  const ThreadId t = strategy_.pick(d);
  RACELAB_CHECK((t == kNoThread && may_abandon) ||
                    std::find(d.enabled.begin(), d.enabled.end(), t) != d.enabled.end(),
                "strategy {} picked thread {} at step {}, which is not enabled (enabled: {})",
                strategy_.describe(), thread_label(*d.exec, t), d.step, enabled_labels(d));
  if (t == kNoThread) return t;
  if (d.previous_enabled && t != previous_) preemption_steps_.push_back(d.step);
  previous_ = t;
  choices_.push_back(t);
  return t;
}

void Decider::reuse_buffers(ExecutionRecord& record) {
  if (choices_.empty() && record.choices.capacity() > choices_.capacity()) {
    choices_ = std::move(record.choices);
    choices_.clear();
  }
  if (preemption_steps_.empty() &&
      record.preemption_steps.capacity() > preemption_steps_.capacity()) {
    preemption_steps_ = std::move(record.preemption_steps);
    preemption_steps_.clear();
  }
}

void Decider::record_into(ExecutionRecord& record) {
  record.choices = std::move(choices_);
  record.preemptions = preemption_steps_.size();
  record.preemption_steps = std::move(preemption_steps_);
  choices_.clear();
  preemption_steps_.clear();
}

std::vector<int> find_wait_cycle(int n, const std::function<int(int)>& waits_for,
                                 const std::function<bool(int)>& finished,
                                 const std::function<bool(int)>& may_start) {
  for (int start = 0; start < n; ++start) {
    if (!may_start(start)) continue;
    std::vector<int> path;
    int t = start;
    while (t >= 0 && !finished(t) && std::find(path.begin(), path.end(), t) == path.end()) {
      path.push_back(t);
      t = waits_for(t);
    }
    if (t < 0 || finished(t)) continue;
    return {std::find(path.begin(), path.end(), t), path.end()};
  }
  return {};
}

namespace {

std::string joined(std::string msg, const std::vector<std::string>& waits) {
  for (std::size_t i = 0; i < waits.size(); ++i) msg += (i == 0 ? "" : "; ") + waits[i];
  return msg;
}

}  // namespace

std::string deadlock_message(const std::vector<std::string>& waits) {
  return joined("deadlock: ", waits);
}

void describe_cycle(Finding& f, const std::vector<int>& cycle,
                    const std::function<std::string(int)>& name,
                    const std::function<std::string(int)>& wait) {
  if (cycle.empty()) return;
  std::vector<std::string> waits;
  for (int t : cycle) {
    f.cycle.push_back(name(t));
    waits.push_back(wait(t));
  }
  f.message = deadlock_message(waits);
}

std::string stuck_deadlock_message(const std::vector<std::string>& waits) {
  return joined("deadlock: no thread can run: ", waits);
}

std::string held_wait_text(std::string_view what, std::string_view owner) {
  return fmt::format("waits for {} held by {}", what, owner);
}

std::string holds_text(const std::vector<std::string>& held) {
  std::string out;
  for (const std::string& name : held) out += (out.empty() ? "holds " : ", ") + name;
  return out.empty() ? out : out + " and";
}

}  // namespace racelab::sched
