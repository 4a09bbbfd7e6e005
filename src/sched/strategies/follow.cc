// FollowStrategy: a model schedule forced on a live run (see strategies.h).
#include <fmt/format.h>

#include <algorithm>
#include <regex>

#include "sched/strategies/strategies.h"
#include "util/errors.h"

namespace racelab::sched {

namespace {

bool op_matches(const std::string& pattern, const std::string& op) {
  if (!pattern.empty() && pattern.back() == '*')
    return op.compare(0, pattern.size() - 1, pattern, 0, pattern.size() - 1) == 0;
  return op == pattern;
}

}  // namespace

std::vector<FollowStep> follow_steps(const std::vector<ReplayStep>& model,
                                     const nlohmann::json& mapping, const std::string& origin) {
  if (!mapping.is_object() || !mapping.contains("ops") || !mapping["ops"].is_array())
    throw InputError(fmt::format("{}: its \"follow\" section needs an \"ops\" list", origin));
  struct OpRule {
    std::string model, live;
    bool hand_off = false;  // "... to THREAD": work handed to another (foreign) thread
  };
  std::vector<std::pair<std::regex, std::string>> threads;
  std::vector<OpRule> ops;
  try {
    for (const auto& t : mapping.value("threads", nlohmann::json::array()))
      threads.emplace_back(std::regex(t.at("model").get<std::string>()),
                           t.at("live").get<std::string>());
    for (const auto& o : mapping["ops"])
      ops.push_back({o.at("model").get<std::string>(), o.at("live").get<std::string>(),
                     o.value("hand_off", false)});
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: \"follow\": {}", origin, e.what()));
  } catch (const std::regex_error& e) {
    throw InputError(fmt::format("{}: \"follow\": a thread pattern is no regular expression: {}",
                                 origin, e.what()));
  }
  // A hand-off is met live the moment the foreign thread can start on it, while the model lets
  // other threads move first: it is moved to just before the next model step of the thread it
  // hands to (or of its own thread, whichever comes first).
  std::vector<std::size_t> release(model.size());
  for (std::size_t i = 0; i < model.size(); ++i) {
    release[i] = i;
    const auto op = std::find_if(ops.begin(), ops.end(),
                                 [&](const OpRule& o) { return op_matches(o.model, model[i].op); });
    const auto to = model[i].op.rfind(" to ");
    if (op == ops.end() || !op->hand_off || to == std::string::npos) continue;
    const std::string server = model[i].op.substr(to + 4);
    std::size_t k = i + 1;
    while (k < model.size() && model[k].thread != server && model[k].thread != model[i].thread) ++k;
    release[i] = k - 1;
  }
  std::vector<FollowStep> out;
  // A step is emitted once the model reaches its release index. Hand-offs keep their model order
  // among themselves (the foreign thread's queue), and come after the other step released with
  // them (model step i itself).
  struct Pending {
    std::size_t release, origin;
    bool hand_off;
    FollowStep step;
  };
  std::vector<Pending> deferred;
  for (std::size_t i = 0; i < model.size(); ++i) {
    const ReplayStep& step = model[i];
    const auto op = std::find_if(ops.begin(), ops.end(),
                                 [&](const OpRule& o) { return op_matches(o.model, step.op); });
    if (op != ops.end()) {
      // Threads no entry maps (the model's autograd workers: foreign threads live) are left out.
      for (const auto& [re, live] : threads) {
        if (std::regex_match(step.thread, re)) {
          deferred.push_back({release[i], i, op->hand_off,
                              FollowStep{std::regex_replace(step.thread, re, live), op->live}});
          break;
        }
      }
    }
    for (const bool current : {true, false}) {
      for (auto it = deferred.begin(); it != deferred.end();) {
        if (it->release <= i && (it->origin == i && !it->hand_off) == current) {
          out.push_back(std::move(it->step));
          it = deferred.erase(it);
        } else {
          ++it;
        }
      }
    }
  }
  for (auto& p : deferred) out.push_back(std::move(p.step));
  return out;
}

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
