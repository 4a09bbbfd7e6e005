// The one rule for what a search earned against its expectations (results::judge), which
// explore, suite, merge, JUnit, a suite's live cases, racelab live and racelab check all read: the
// cases a user meets, and a scenario run judged by it.
#include "catch.h"
#include "results/scenario_run.h"
#include "sched/loop.h"
#include "sched/verdict.h"

namespace model = racelab::model;
namespace results = racelab::results;
namespace sched = racelab::sched;
using results::Outcome;
using results::Why;
using sched::StopReason;

namespace {

results::SearchFacts search(bool proves, StopReason stop, std::vector<std::string> found = {}) {
  return {.strategy = proves ? "dfs" : "random",
          .stop = stop,
          .executions = 12,
          .cap = 2000,
          .proves = proves,
          .bounded = proves,
          .found = std::move(found)};
}

}  // namespace

TEST_CASE("a must kind missed by a search that did not finish is inconclusive, never a failure",
          "[verdict]") {
  const results::Wording w = results::model_wording(2000, true);
  auto missed = [&](bool proves, StopReason stop) {
    return results::judge({.must = {"deadlock"}}, search(proves, stop), std::nullopt, w).outcome;
  };
  // dfs or dpor: only covering the space finishes the search.
  CHECK(missed(true, StopReason::kBudget) == Outcome::kInconclusive);
  CHECK(missed(true, StopReason::kTimeLimit) == Outcome::kInconclusive);
  CHECK(missed(true, StopReason::kInterrupted) == Outcome::kInconclusive);
  CHECK(missed(true, StopReason::kExhausted) == Outcome::kFail);
  // random or pct: all its executions ran, or the time limit or an interrupt stopped it first.
  CHECK(missed(false, StopReason::kBudget) == Outcome::kFail);
  CHECK(missed(false, StopReason::kTimeLimit) == Outcome::kInconclusive);
  CHECK(missed(false, StopReason::kInterrupted) == Outcome::kInconclusive);
  // A must_not kind found fails, however the search ended.
  CHECK(results::judge({.must = {"oom"}, .must_not = {"deadlock"}},
                       search(true, StopReason::kTimeLimit, {"deadlock"}), std::nullopt, w)
            .outcome == Outcome::kFail);
  // An absence claimed: proven only by a proving search that covered its space; a sample's
  // absence passes on what it sampled.
  auto absent = [&](bool proves, StopReason stop) {
    return results::judge({.must_not = {"deadlock"}}, search(proves, stop), std::nullopt, w)
        .outcome;
  };
  CHECK(absent(true, StopReason::kBudget) == Outcome::kInconclusive);
  CHECK(absent(true, StopReason::kExhausted) == Outcome::kPass);
  CHECK(absent(false, StopReason::kTimeLimit) == Outcome::kPass);
}

TEST_CASE("each command words the rule's sentences with its own remedy", "[verdict]") {
  // A suite's live case names its table key, racelab live its flags, racelab check its proof.
  const auto cut = search(true, StopReason::kBudget);
  CHECK(results::judge({.must_not = {"deadlock"}}, cut, std::nullopt, results::live_case_wording())
            .reason ==
        "inconclusive: the dfs search was cut short by the execution cap after 12 executions, "
        "before covering its bounded space, so must_not [deadlock] is not proven (raise [live] "
        "executions or lower max_preemptions)");
  const results::Verdict live =
      results::judge({.no_failure = true}, cut, std::nullopt, results::live_wording());
  CHECK(live.why == Why::kCutShort);
  CHECK(live.reason ==
        "inconclusive: the dfs search was cut short by the execution cap after 12 executions, "
        "before covering its bounded space, so the program's absence of a deadlock, hang or "
        "exception is not proven (raise --executions, or lower --max-preemptions)");
  const results::Verdict unfinished =
      results::judge({.must = {"deadlock"}}, search(false, StopReason::kTimeLimit), std::nullopt,
                     results::live_wording());
  CHECK(unfinished.why == Why::kUnfinished);
  CHECK(unfinished.reason ==
        "inconclusive: expected but not found: deadlock, but the random search was cut short by "
        "the time limit after 12 executions, before it ran its 2000 executions: an unfinished "
        "search shows nothing either way (raise or drop --time-limit)");
  auto proof = search(true, StopReason::kTimeLimit);
  proof.bounded = false;
  CHECK(
      results::judge({.no_failure = true}, proof, std::nullopt, results::check_wording()).reason ==
      "the dpor proof was cut short by the time limit after 12 executions, before covering its "
      "space: not a proof (raise --proof-executions or --time-limit)");
  // An interrupt is not the cap: the proof's sentence says what stopped it.
  proof.stop = StopReason::kInterrupted;
  CHECK(
      results::judge({.no_failure = true}, proof, std::nullopt, results::check_wording()).reason ==
      "the dpor proof was cut short by an interrupt after 12 executions, before covering its "
      "space: not a proof (let it run to the end)");
  // What an interrupt left out of a run is no verdict: inconclusive where nothing failed, a
  // failure found before it stands.
  auto sample = search(false, StopReason::kInterrupted);
  sample.interrupted = "races, the hunt; not run: races, the proof";
  const results::Verdict cut_sample =
      results::judge({.no_failure = true}, sample, std::nullopt, results::check_wording());
  CHECK(cut_sample.outcome == Outcome::kInconclusive);
  CHECK(cut_sample.reason ==
        "inconclusive: interrupted in races, the hunt; not run: races, the proof: not a verdict "
        "(let it run to the end)");
  sample.failure_found = true;
  CHECK(results::judge({.no_failure = true}, sample, std::nullopt, results::check_wording())
            .outcome == Outcome::kFail);
  // A search that ended at a failure ending the process did not leave its must kind open.
  auto hang = search(false, StopReason::kInterrupted, {"hang"});
  hang.stopped_at_failure = true;
  CHECK(
      results::judge({.must = {"deadlock"}}, hang, std::nullopt, results::live_wording()).outcome ==
      Outcome::kFail);
}

TEST_CASE("lost control and nondeterminism say nothing; another run's failure still fails",
          "[verdict]") {
  const results::Wording w = results::live_wording();
  auto f = search(false, StopReason::kBudget, {"deadlock"});
  f.failure_found = true;
  f.lost_control = true;
  CHECK(results::judge({.no_failure = true}, f, std::nullopt, w).why == Why::kLostControl);
  f.nondeterministic = true;  // the more specific words win
  CHECK(results::judge({.no_failure = true}, f, std::nullopt, w).why == Why::kNondeterministic);
  f.other_run_failed = true;  // racelab check: an uncontrolled run failed
  CHECK(results::judge({.no_failure = true}, f, std::nullopt, w).outcome == Outcome::kFail);
}

TEST_CASE("memory: not as expected fails, not measured is inconclusive unless that passes",
          "[verdict]") {
  const auto clean = search(false, StopReason::kBudget);
  const results::Wording w = results::live_case_wording();
  results::Expectations e{.memory = results::MemoryExpect::kStable};
  const results::MemoryFacts grew{.measured = true, .stable = false, .summary = "grew"};
  const results::Verdict v = results::judge(e, clean, grew, w);
  CHECK(v.outcome == Outcome::kFail);
  CHECK(v.reason == "memory expected stable, got grew");
  const results::MemoryFacts unknown{.measured = false, .summary = "not measured: no CUDA"};
  CHECK(results::judge(e, clean, unknown, w).reason ==
        "inconclusive: memory expected stable, not measured: no CUDA");
  e.unmeasured_memory_passes = true;
  CHECK(results::judge(e, clean, unknown, w).outcome == Outcome::kPass);
  const results::MemoryFacts crashed{.run_failed = true, .summary = "the run failed"};
  CHECK(results::judge(e, clean, crashed, w).reason ==
        "the allocator capture run failed: the run failed");
}

TEST_CASE("outcomes read back from their report names", "[verdict]") {
  for (Outcome o : {Outcome::kPass, Outcome::kFail, Outcome::kInconclusive, Outcome::kPending,
                    Outcome::kSkipped})
    CHECK(results::outcome_from_name(results::outcome_name(o)) == o);
  CHECK(std::string(results::outcome_word(Outcome::kSkipped)) == "SKIP");
  CHECK(std::string(results::outcome_name(Outcome::kSkipped)) == "skipped");
  CHECK_FALSE(results::outcome_from_name("PASS"));
}

TEST_CASE(
    "a scenario whose dfs search the time limit cut short before its deadlock is inconclusive",
    "[verdict]") {
  results::ScenarioRun run;
  run.scenario.must = {"deadlock"};
  run.options.strategy.kind = sched::StrategyKind::kDfs;
  run.options.iterations = 2000000;
  run.result.executions = 96613;
  run.result.stop = StopReason::kTimeLimit;
  run.missing = {"deadlock"};
  CHECK(run.verdict() == results::Outcome::kInconclusive);
  CHECK(run.verdict_reason() ==
        "inconclusive: expected but not found: deadlock, but the dfs search was cut short by the "
        "time limit after 96613 executions, before covering its bounded space: an unfinished "
        "search shows nothing either way (raise or drop --time-limit)");
  CHECK(results::explore_exit_code(run) == 1);
  run.result.stop = StopReason::kExhausted;  // the whole bounded space, and no deadlock in it
  CHECK(run.verdict() == results::Outcome::kFail);
  CHECK(run.verdict_reason() == "expected but not found: deadlock");
}
