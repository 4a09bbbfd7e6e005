// The "follow" section of an interposition table, applied to a model schedule (see follow.h).
#include "live/python/follow.h"

#include <fmt/format.h>

#include <algorithm>
#include <regex>
#include <utility>

#include "live/python/bridge.h"
#include "sched/schedule.h"
#include "util/errors.h"

namespace racelab::live::python {

namespace {

void refuse_live(const sched::Schedule& model, const std::string& path) {
  if (sched::is_live_subject(model.subject_name))
    throw InputError(fmt::format("{}: a live schedule; replay it with --replay", path));
}

bool op_matches(const std::string& pattern, const std::string& op) {
  if (!pattern.empty() && pattern.back() == '*')
    return op.compare(0, pattern.size() - 1, pattern, 0, pattern.size() - 1) == 0;
  return op == pattern;
}

}  // namespace

std::vector<sched::FollowStep> follow_steps(const std::vector<sched::ReplayStep>& model,
                                            const nlohmann::json& mapping,
                                            const std::string& origin) {
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
  std::vector<sched::FollowStep> out;
  // A step is emitted once the model reaches its release index. Hand-offs keep their model order
  // among themselves (the foreign thread's queue), and come after the other step released with
  // them (model step i itself).
  struct Pending {
    std::size_t release, origin;
    bool hand_off;
    sched::FollowStep step;
  };
  std::vector<Pending> deferred;
  for (std::size_t i = 0; i < model.size(); ++i) {
    const sched::ReplayStep& step = model[i];
    const auto op = std::find_if(ops.begin(), ops.end(),
                                 [&](const OpRule& o) { return op_matches(o.model, step.op); });
    if (op != ops.end()) {
      // Threads no entry maps (the model's autograd workers: foreign threads live) are left out.
      for (const auto& [re, live] : threads) {
        if (std::regex_match(step.thread, re)) {
          deferred.push_back(
              {release[i], i, op->hand_off,
               sched::FollowStep{std::regex_replace(step.thread, re, live), op->live}});
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

Following follow_schedule(const sched::Schedule& model, const std::string& path,
                          const std::string& table, const std::string& interpose) {
  refuse_live(model, path);
  const auto parsed = nlohmann::json::parse(table);
  if (!parsed.contains("follow"))
    throw InputError(
        fmt::format("--interpose {}: the table has no \"follow\" section mapping "
                    "model names onto live ones",
                    interpose));
  Following out{follow_steps(model.steps, parsed["follow"], interpose), model.steps.size()};
  if (out.steps.empty())
    throw InputError(fmt::format("{}: none of its {} steps maps onto a live operation of {}", path,
                                 model.steps.size(), interpose));
  return out;
}

Following follow_schedule(const sched::Schedule& model, const std::string& path,
                          const std::string& interpose) {
  refuse_live(model, path);  // before the table: its errors are the option's, not the file's
  return follow_schedule(model, path, interposition_table(interpose), interpose);
}

}  // namespace racelab::live::python
