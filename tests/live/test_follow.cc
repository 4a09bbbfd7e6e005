// Following a model schedule on a live program: how the "follow" section of an interposition table
// maps the model's thread and operation names onto the live program's.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "catch.h"
#include "live/python/follow.h"
#include "sched/schedule.h"
#include "util/errors.h"

namespace lp = racelab::live::python;
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

}  // namespace

TEST_CASE("Model steps map onto live names; unmapped operations and threads are left out",
          "[follow]") {
  const std::vector<sched::ReplayStep> model = {{"drafter 0.1", "start"},
                                                {"drafter 0.1", "read code cache"},
                                                {"drafter 0.1", "lock compile_lock"},
                                                {"autograd 0", "start"},
                                                {"main", "set start_gate"},
                                                {"drafter 0.0", "lock compile_lock"}};
  const auto steps = lp::follow_steps(model, kMapping, "t.json");
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
  const auto steps = lp::follow_steps(model, kMapping, "t.json");
  REQUIRE(steps.size() == 3);
  // Live, the worker would start on the backward at once: the lock goes first, as the model has it.
  CHECK(steps[0].thread == "drafter 0");
  CHECK(steps[1].thread == "drafter 1");
  CHECK(steps[1].op == "backward");
  CHECK(steps[2].op == "return");
}

TEST_CASE("A malformed follow mapping is bad input", "[follow]") {
  CHECK_THROWS_AS(lp::follow_steps({}, nlohmann::json::object(), "t.json"), racelab::InputError);
  auto bad = kMapping;
  bad["threads"][0]["model"] = "(";
  CHECK_THROWS_AS(lp::follow_steps({}, bad, "t.json"), racelab::InputError);
}

TEST_CASE("Hand-offs to the same foreign thread keep their model order", "[follow]") {
  const std::vector<sched::ReplayStep> model = {{"drafter 0.1", "submit backward to autograd 0"},
                                                {"drafter 0.0", "lock compile_lock"},
                                                {"drafter 0.0", "submit backward to autograd 0"},
                                                {"autograd 0", "take from autograd 0"}};
  const auto steps = lp::follow_steps(model, kMapping, "t.json");
  REQUIRE(steps.size() == 3);
  CHECK(steps[0].thread == "drafter 0");
  CHECK(steps[0].op == "lock compile_lock");
  // The worker's queue is first in, first out: drafter 1's backward stays ahead of drafter 0's.
  CHECK(steps[1].thread == "drafter 1");
  CHECK(steps[2].thread == "drafter 0");
  CHECK(steps[2].op == "backward");
}

TEST_CASE("--follow takes a model schedule and a table with a follow section", "[follow]") {
  sched::Schedule model;
  model.subject_name = "lazy-2-drafters";
  model.steps = {{"drafter 0.1", "start"}, {"drafter 0.1", "read code cache"}};
  const std::string table = nlohmann::json{{"follow", kMapping}}.dump();
  const lp::Following f = lp::follow_schedule(model, "m.json", table, "t.json");
  REQUIRE(f.steps.size() == 1);
  CHECK(f.steps[0].thread == "drafter 1");
  CHECK(f.model_steps == 2);
  // A live schedule replays with --replay; a table needs its follow section; something must map.
  model.subject_name = racelab::sched::kLivePythonSubject;
  CHECK_THROWS_WITH(lp::follow_schedule(model, "m.json", table, "t.json"),
                    "m.json: a live schedule; replay it with --replay");
  model.subject_name = "lazy-2-drafters";
  CHECK_THROWS_WITH(lp::follow_schedule(model, "m.json", "{}", "t.json"),
                    "--interpose t.json: the table has no \"follow\" section mapping model names "
                    "onto live ones");
  model.steps = {{"drafter 0.1", "read code cache"}};
  CHECK_THROWS_WITH(lp::follow_schedule(model, "m.json", table, "t.json"),
                    "m.json: none of its 1 steps maps onto a live operation of t.json");
}
