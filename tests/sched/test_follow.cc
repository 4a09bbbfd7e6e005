// Following a model schedule on a live program: the name mapping and the strategy's choices.
#include <map>
#include <string>
#include <vector>

#include "catch.h"
#include "sched/strategies/strategies.h"
#include "util/errors.h"

namespace sched = racelab::sched;

namespace {

const nlohmann::json kMapping = nlohmann::json::parse(R"J({
  "threads": [{"model": "main", "live": "main"},
              {"model": "drafter 0\\.(\\d+)", "live": "drafter $1"}],
  "ops": [{"model": "start", "live": "start"},
          {"model": "lock compile_lock", "live": "lock compile_lock"},
          {"model": "submit backward to *", "live": "backward", "hand_off": true},
          {"model": "wait job *", "live": "return"}]
})J");

// A live program as the strategy sees it: names, pending operations, finished threads.
struct View : sched::ThreadView {
  std::vector<std::string> names, pending;
  std::vector<bool> done;
  std::size_t thread_count() const override { return names.size(); }
  const std::string& thread_name(sched::ThreadId t) const override { return names[t]; }
  bool finished(sched::ThreadId t) const override { return done[t]; }
  std::string pending_text(sched::ThreadId t) const override { return pending[t]; }
};

sched::ThreadId pick(sched::FollowStrategy& s, const View& v, std::vector<sched::ThreadId> enabled,
                     sched::ThreadId previous = sched::kNoThread) {
  sched::Decision d;
  d.enabled = enabled;
  d.previous = previous;
  d.previous_enabled = std::find(enabled.begin(), enabled.end(), previous) != enabled.end();
  d.exec = &v;
  return s.pick(d);
}

}  // namespace

TEST_CASE("Model steps map onto live names; unmapped operations and threads are left out",
          "[follow]") {
  const std::vector<sched::ReplayStep> model = {{"drafter 0.1", "start"},
                                                {"drafter 0.1", "read code cache"},
                                                {"drafter 0.1", "lock compile_lock"},
                                                {"autograd 0", "start"},
                                                {"main", "set start_gate"},
                                                {"drafter 0.0", "lock compile_lock"}};
  const auto steps = sched::follow_steps(model, kMapping, "t.json");
  REQUIRE(steps.size() == 3);
  CHECK(steps[0].thread == "drafter 1");
  CHECK(steps[0].op == "start");
  CHECK(steps[1].op == "lock compile_lock");
  CHECK(steps[2].thread == "drafter 0");
}

TEST_CASE("A hand-off to a foreign thread moves to just before that thread's next step",
          "[follow]") {
  const std::vector<sched::ReplayStep> model = {
      {"drafter 0.1", "submit backward to autograd 0"},
      {"drafter 0.0", "lock compile_lock"},
      {"autograd 0", "take from autograd 0"},
      {"drafter 0.1", "wait job 1 (backward) on autograd 0"}};
  const auto steps = sched::follow_steps(model, kMapping, "t.json");
  REQUIRE(steps.size() == 3);
  // Live, the worker would start on the backward at once: the lock goes first, as the model has it.
  CHECK(steps[0].thread == "drafter 0");
  CHECK(steps[1].thread == "drafter 1");
  CHECK(steps[1].op == "backward");
  CHECK(steps[2].op == "return");
}

TEST_CASE("A malformed follow mapping is bad input", "[follow]") {
  CHECK_THROWS_AS(sched::follow_steps({}, nlohmann::json::object(), "t.json"), racelab::InputError);
  auto bad = kMapping;
  bad["threads"][0]["model"] = "(";
  CHECK_THROWS_AS(sched::follow_steps({}, bad, "t.json"), racelab::InputError);
}

TEST_CASE("The strategy runs each step's thread until it performs the step", "[follow]") {
  sched::FollowStrategy s({{"b", "lock"}, {"a", "lock"}, {"b", "unlock"}});
  REQUIRE(s.begin_execution(0));
  View v;
  v.names = {"a", "b"};
  v.pending = {"lock", "point"};
  v.done = {false, false};
  // b is not at its lock yet: it runs (the live program has a point the model has not).
  CHECK(pick(s, v, {0, 1}) == 1);
  CHECK(s.met() == 0);
  v.pending[1] = "lock";
  CHECK(pick(s, v, {0, 1}) == 1);
  CHECK(s.met() == 1);
  // a's lock now waits for b: b runs on, although the model's next step is a's.
  v.pending[1] = "unlock";
  CHECK(pick(s, v, {1}, 1) == 1);
  CHECK(s.met() == 2);  // b's unlock, passed ahead of a's blocked lock
  CHECK(pick(s, v, {0}, 1) == 0);
  CHECK(s.met() == 3);
  // Past the last step: no preemption.
  v.pending = {"x", "y"};
  CHECK(pick(s, v, {0, 1}, 1) == 1);
}

TEST_CASE("A step its thread performed before the model's order asked for it is passed over",
          "[follow]") {
  sched::FollowStrategy s({{"worker", "start"}, {"main", "start"}, {"worker", "lock"}});
  REQUIRE(s.begin_execution(0));
  View v;
  v.names = {"main"};
  v.pending = {"start"};
  v.done = {false};
  // worker does not exist yet: main must run first (it starts the worker).
  CHECK(pick(s, v, {0}) == 0);
  v.names = {"main", "worker"};
  v.pending = {"join worker", "start"};
  v.done = {false, false};
  CHECK(pick(s, v, {1}, 0) == 1);
  v.pending[1] = "lock";
  // main's start happened already: the worker's lock is next.
  CHECK(pick(s, v, {1}, 1) == 1);
  CHECK(s.met() == 3);
}

TEST_CASE("Hand-offs to the same foreign thread keep their model order", "[follow]") {
  const std::vector<sched::ReplayStep> model = {{"drafter 0.1", "submit backward to autograd 0"},
                                                {"drafter 0.0", "lock compile_lock"},
                                                {"drafter 0.0", "submit backward to autograd 0"},
                                                {"autograd 0", "take from autograd 0"}};
  const auto steps = sched::follow_steps(model, kMapping, "t.json");
  REQUIRE(steps.size() == 3);
  CHECK(steps[0].thread == "drafter 0");
  CHECK(steps[0].op == "lock compile_lock");
  // The worker's queue is first in, first out: drafter 1's backward stays ahead of drafter 0's.
  CHECK(steps[1].thread == "drafter 1");
  CHECK(steps[2].thread == "drafter 0");
  CHECK(steps[2].op == "backward");
}
