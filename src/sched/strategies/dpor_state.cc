#include "sched/strategies/dpor_state.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "util/errors.h"

namespace racelab::sched::dpor {

namespace {

using Json = nlohmann::json;

// An access as [kind, object].
Json accesses_json(const std::vector<Access>& footprint) {
  Json out = Json::array();
  for (const Access& a : footprint) out.push_back({static_cast<int>(a.kind), a.object});
  return out;
}

std::vector<Access> accesses_from(const Json& j) {
  std::vector<Access> out;
  for (const Json& a : j)
    out.push_back({static_cast<AccessKind>(a.at(0).get<int>()), a.at(1).get<std::int32_t>()});
  return out;
}

Json tree_json(const std::vector<WakeupNode>& children) {
  Json out = Json::array();
  for (const WakeupNode& n : children)
    out.push_back({{"thread", n.thread},
                   {"known", n.known},
                   {"footprint", accesses_json(n.footprint)},
                   {"children", tree_json(n.children)},
                   {"guess", accesses_json(n.guess)}});
  return out;
}

std::vector<WakeupNode> tree_from(const Json& j) {
  std::vector<WakeupNode> out;
  for (const Json& n : j)
    out.push_back({n.at("thread").get<ThreadId>(), n.at("known").get<bool>(),
                   accesses_from(n.at("footprint")), tree_from(n.at("children")),
                   n.contains("guess") ? accesses_from(n.at("guess")) : std::vector<Access>{}});
  return out;
}

}  // namespace

std::string to_text(const SavedSearch& s) {
  Json stack = Json::array();
  for (const SavedNode& n : s.stack) {
    Json sleep = Json::array();
    for (const auto& [thread, footprint] : n.sleep)
      sleep.push_back({{"thread", thread}, {"footprint", accesses_json(footprint)}});
    std::vector<int> backtrack(n.backtrack.begin(), n.backtrack.end());
    stack.push_back({{"enabled", n.enabled},
                     {"chosen", n.chosen},
                     {"sleep", sleep},
                     {"previous", n.previous},
                     {"previous_enabled", n.previous_enabled},
                     {"preemptions_before", n.preemptions_before},
                     {"backtrack", backtrack},
                     {"gated", n.gated},
                     {"wut", tree_json(n.wut)},
                     {"below", tree_json(n.below)},
                     {"done", accesses_json(n.done)}});
  }
  const Json out = {{"strategy", s.strategy},
                    {"threads", s.threads},
                    {"first_new", s.first_new},
                    {"exhausted", s.exhausted},
                    {"states_decided", s.states_decided},
                    {"classes", s.classes},
                    {"redundant", s.redundant},
                    {"frozen", s.frozen},
                    {"stack", stack}};
  return out.dump();
}

SavedSearch from_text(const std::string& text) {
  try {
    const Json j = Json::parse(text);
    SavedSearch s;
    s.strategy = j.at("strategy").get<std::string>();
    s.threads = j.at("threads").get<std::size_t>();
    s.first_new = j.at("first_new").get<std::size_t>();
    s.exhausted = j.at("exhausted").get<bool>();
    s.states_decided = j.at("states_decided").get<bool>();
    s.classes = j.at("classes").get<std::uint64_t>();
    s.redundant = j.at("redundant").get<std::uint64_t>();
    s.frozen = j.value("frozen", std::size_t{0});
    for (const Json& n : j.at("stack")) {
      SavedNode node;
      node.enabled = n.at("enabled").get<std::vector<ThreadId>>();
      node.chosen = n.at("chosen").get<ThreadId>();
      for (const Json& e : n.at("sleep"))
        node.sleep.emplace_back(e.at("thread").get<ThreadId>(), accesses_from(e.at("footprint")));
      node.previous = n.at("previous").get<ThreadId>();
      node.previous_enabled = n.at("previous_enabled").get<bool>();
      node.preemptions_before = n.at("preemptions_before").get<int>();
      for (int b : n.at("backtrack").get<std::vector<int>>())
        node.backtrack.push_back(static_cast<char>(b));
      node.gated = n.at("gated").get<std::vector<ThreadId>>();
      node.wut = tree_from(n.at("wut"));
      node.below = tree_from(n.at("below"));
      if (n.contains("done")) node.done = accesses_from(n.at("done"));
      s.stack.push_back(std::move(node));
    }
    if (s.first_new >= s.stack.size() && !s.exhausted)
      throw InputError("its diverging node is not on its stack");
    if (s.frozen > s.stack.size()) throw InputError("its frozen prefix is longer than its stack");
    return s;
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("not a dpor search state: {}", e.what()));
  } catch (const InputError& e) {
    throw InputError(fmt::format("not a dpor search state: {}", e.what()));
  }
}

}  // namespace racelab::sched::dpor
