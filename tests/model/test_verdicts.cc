// The one rule for what a search earned against its expectations (sched::expectation_verdict),
// which explore, suite, merge, JUnit, a suite's live cases and racelab live --expect deadlock all
// read: the cases a user meets, and a scenario run judged by it.
#include "catch.h"
#include "model/suite.h"
#include "sched/loop.h"

namespace model = racelab::model;
namespace sched = racelab::sched;
using sched::ExpectationVerdict;
using sched::StopReason;

TEST_CASE("a must kind missed by a search that did not finish is inconclusive, never a failure",
          "[verdict]") {
  auto missed = [](bool proves, StopReason stop) {
    return sched::expectation_verdict({.proves = proves, .stop = stop, .must_missing = true});
  };
  // dfs or dpor: only covering the space finishes the search.
  CHECK(missed(true, StopReason::kBudget) == ExpectationVerdict::kInconclusive);
  CHECK(missed(true, StopReason::kTimeLimit) == ExpectationVerdict::kInconclusive);
  CHECK(missed(true, StopReason::kInterrupted) == ExpectationVerdict::kInconclusive);
  CHECK(missed(true, StopReason::kExhausted) == ExpectationVerdict::kFails);
  // random or pct: all its executions ran, or the time limit or an interrupt stopped it first.
  CHECK(missed(false, StopReason::kBudget) == ExpectationVerdict::kFails);
  CHECK(missed(false, StopReason::kTimeLimit) == ExpectationVerdict::kInconclusive);
  CHECK(missed(false, StopReason::kInterrupted) == ExpectationVerdict::kInconclusive);
  // A must_not kind found fails, however the search ended.
  CHECK(sched::expectation_verdict({.proves = true,
                                    .stop = StopReason::kTimeLimit,
                                    .must_missing = true,
                                    .wrong_found = true}) == ExpectationVerdict::kFails);
  // An absence claimed: proven only by a proving search that covered its space; a sample's
  // absence passes on what it sampled.
  auto absent = [](bool proves, StopReason stop) {
    return sched::expectation_verdict({.proves = proves, .stop = stop, .claims_absence = true});
  };
  CHECK(absent(true, StopReason::kBudget) == ExpectationVerdict::kInconclusive);
  CHECK(absent(true, StopReason::kExhausted) == ExpectationVerdict::kHolds);
  CHECK(absent(false, StopReason::kTimeLimit) == ExpectationVerdict::kHolds);
}

TEST_CASE(
    "a scenario whose dfs search the time limit cut short before its deadlock is inconclusive",
    "[verdict]") {
  model::ScenarioRun run;
  run.scenario.must = {"deadlock"};
  run.options.strategy.kind = sched::StrategyKind::kDfs;
  run.options.iterations = 2000000;
  run.result.executions = 96613;
  run.result.stop = StopReason::kTimeLimit;
  run.missing = {"deadlock"};
  CHECK(run.verdict() == model::Verdict::kInconclusive);
  CHECK(run.verdict_reason() ==
        "inconclusive: expected but not found: deadlock, but the dfs search was cut short by the "
        "time limit after 96613 executions, before covering its bounded space: an unfinished "
        "search shows nothing either way (raise or drop --time-limit)");
  CHECK(model::explore_exit_code(run) == 1);
  run.result.stop = StopReason::kExhausted;  // the whole bounded space, and no deadlock in it
  CHECK(run.verdict() == model::Verdict::kFail);
  CHECK(run.verdict_reason() == "expected but not found: deadlock");
}
