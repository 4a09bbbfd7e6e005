// FollowStrategy: a model schedule forced on a live run (see strategies.h), its steps already in
// the live program's names.
#include <fmt/format.h>

#include <algorithm>

#include "sched/strategies/strategies.h"

namespace racelab::sched {

FollowStrategy::FollowStrategy(std::vector<FollowStep> steps) : steps_(std::move(steps)) {
  std::map<std::pair<std::string, std::string>, int> seen;
  for (const auto& s : steps_) occurrence_.push_back(++seen[{s.thread, s.op}]);
}

ThreadId FollowStrategy::pick(const Decision& d) {
  const ThreadId t = choose(d);
  if (d.exec != nullptr) ++performed_[{d.exec->thread_name(t), d.exec->pending_text(t)}];
  return t;
}

ThreadId FollowStrategy::choose(const Decision& d) {
  const auto fallback = [&] { return d.previous_enabled ? d.previous : d.enabled.front(); };
  if (d.exec == nullptr) return fallback();
  const auto find = [&](const std::string& name) {
    for (ThreadId i = 0; i < static_cast<ThreadId>(d.exec->thread_count()); ++i)
      if (d.exec->thread_name(i) == name) return i;
    return kNoThread;
  };
  const auto enabled = [&](ThreadId t) {
    return t != kNoThread && std::find(d.enabled.begin(), d.enabled.end(), t) != d.enabled.end();
  };
  const auto done = [&](std::size_t j) {
    return performed_[{steps_[j].thread, steps_[j].op}] >= occurrence_[j];
  };
  // The first step not yet performed whose thread can run: that thread runs until it performs
  // it. Steps of threads that cannot run now (not started, waiting, inside a blocking call) are
  // passed over for the moment, and given up once their thread has finished.
  for (std::size_t j = next_; j < steps_.size(); ++j) {
    if (done(j)) {
      if (j == next_) ++next_;  // performed, possibly before the model's order asked for it
      continue;
    }
    const ThreadId t = find(steps_[j].thread);
    if (t != kNoThread && d.exec->finished(t)) {
      if (j == next_) ++next_;  // the live thread never met this step
      continue;
    }
    if (!enabled(t)) continue;
    if (d.exec->pending_text(t) == steps_[j].op) ++met_;
    return t;
  }
  return fallback();
}

std::string FollowStrategy::describe() const {
  return fmt::format("follow({} model steps)", steps_.size());
}

}  // namespace racelab::sched
