// The live search (live::search): its keep policy (live::StopAtFailure) on results made by hand,
// what a live search keeps and where it stops; then the search over real threads.
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "catch.h"
#include "live/search.h"
#include "lock_order.h"
#include "sched/kinds.h"
#include "sched/strategies/strategies.h"
#include "util/errors.h"

namespace live = racelab::live;
namespace sched = racelab::sched;
namespace kinds = racelab::sched::kinds;
namespace results = racelab::results;
using racelab::live_test::LockOrder;

namespace {

live::Result ended_with(std::vector<std::string> found, bool hung = false) {
  live::Result r;
  for (auto& kind : found) r.findings.push_back({.kind = std::move(kind), .message = "m"});
  r.hung = hung;
  r.completed = !hung;
  return r;
}

bool keep(live::StopAtFailure& policy, std::uint64_t execution, live::Result r) {
  return policy.keep(execution, r);
}

}  // namespace

TEST_CASE("a live search stops at the first failure; evidence never stops it", "[search]") {
  live::StopAtFailure policy(/*expect_deadlock=*/false, /*replaying=*/false);
  CHECK(keep(policy, 0, ended_with({kinds::kDuplicateCompile})));
  CHECK(keep(policy, 1, ended_with({})));
  CHECK_FALSE(keep(policy, 2, ended_with({kinds::kException, kinds::kDuplicateCompile})));
  policy.finish();
  REQUIRE(policy.failure);
  CHECK(policy.failure->found(kinds::kException));
  CHECK(policy.failure_execution == 2);
  CHECK(policy.stopped_at_failure);
  REQUIRE(policy.last);  // the last execution before it
  CHECK(policy.last->findings.empty());
  CHECK_FALSE(policy.other);
  CHECK(policy.kinds == std::map<std::string, std::uint64_t>{{kinds::kDuplicateCompile, 2},
                                                             {kinds::kException, 1}});
}

TEST_CASE("racelab losing control ends a live search as a failure does", "[search]") {
  live::StopAtFailure policy(/*expect_deadlock=*/true, /*replaying=*/false);
  CHECK_FALSE(keep(policy, 0, ended_with({kinds::kLostControl}, /*hung=*/true)));
  REQUIRE(policy.failure);
  CHECK(policy.stopped_at_failure);
  CHECK_FALSE(policy.other);
}

TEST_CASE("searching for a deadlock keeps the first other failure and goes on to the deadlock",
          "[search]") {
  live::StopAtFailure policy(/*expect_deadlock=*/true, /*replaying=*/false);
  CHECK(keep(policy, 0, ended_with({})));
  CHECK(keep(policy, 1, ended_with({kinds::kFxTraceError})));
  CHECK(keep(policy, 2, ended_with({kinds::kException})));
  CHECK_FALSE(keep(policy, 3, ended_with({kinds::kDeadlock})));
  policy.finish();
  REQUIRE(policy.failure);
  CHECK(policy.failure->found(kinds::kDeadlock));
  CHECK(policy.failure_execution == 3);
  REQUIRE(policy.other);  // the first of the others
  CHECK(policy.other->found(kinds::kFxTraceError));
  CHECK(policy.other_execution == 1);
}

TEST_CASE("searching for a deadlock that never comes, the other failure is the result",
          "[search]") {
  live::StopAtFailure policy(/*expect_deadlock=*/true, /*replaying=*/false);
  CHECK(keep(policy, 0, ended_with({kinds::kException})));
  CHECK(keep(policy, 1, ended_with({})));
  CHECK_FALSE(policy.failure);
  policy.finish();
  REQUIRE(policy.failure);
  CHECK(policy.failure->found(kinds::kException));
  CHECK(policy.failure_execution == 0);
  CHECK_FALSE(policy.other);
  CHECK_FALSE(policy.stopped_at_failure);  // the budget ended it
}

TEST_CASE("a hang ends a deadlock search: its threads are stuck and the process must exit",
          "[search]") {
  live::StopAtFailure policy(/*expect_deadlock=*/true, /*replaying=*/false);
  CHECK_FALSE(keep(policy, 0, ended_with({kinds::kHang}, /*hung=*/true)));
  REQUIRE(policy.failure);
  CHECK(policy.failure->hung);
  CHECK_FALSE(policy.other);
}

TEST_CASE("--all-findings keeps each new kind's first execution and stops only where stuck",
          "[search]") {
  live::StopAtFailure policy(/*expect_deadlock=*/false, /*replaying=*/false,
                             /*all_findings=*/true, /*known=*/{kinds::kDeadlock});
  CHECK(keep(policy, 5, ended_with({kinds::kException})));
  CHECK(keep(policy, 6, ended_with({kinds::kException})));  // known now: not kept again
  CHECK(keep(policy, 7, ended_with({kinds::kDuplicateCompile})));
  CHECK_FALSE(policy.hand_over);
  // A deadlock known from an earlier process: not kept, but its threads are stuck.
  CHECK_FALSE(keep(policy, 8, ended_with({kinds::kDeadlock}, /*hung=*/true)));
  CHECK(policy.hand_over);
  REQUIRE(policy.found.size() == 1);
  CHECK(policy.found[0].first == 5);
  CHECK_FALSE(policy.failure);
  CHECK_FALSE(policy.stopped_at_failure);
  CHECK(policy.kinds == std::map<std::string, std::uint64_t>{{kinds::kException, 2},
                                                             {kinds::kDuplicateCompile, 1},
                                                             {kinds::kDeadlock, 1}});
  // Losing control still ends it, as the result.
  live::StopAtFailure lost(false, false, true);
  CHECK_FALSE(keep(lost, 0, ended_with({kinds::kLostControl}, /*hung=*/true)));
  CHECK(lost.failure);
  CHECK_FALSE(lost.hand_over);
}

TEST_CASE("the fresh process of an --all-findings search runs the same command, going on",
          "[search]") {
  using V = std::vector<std::string>;
  CHECK(live::continuation_argv(
            V{"racelab", "live", "python", "--all-findings", "s.py", "--", "--continue-from", "x"},
            "out/handover.json") == V{"racelab", "live", "python", "--continue-from",
                                      "out/handover.json", "--all-findings", "s.py", "--",
                                      "--continue-from", "x"});
  CHECK(live::continuation_argv(
            V{"racelab", "live", "torch", "--continue-from", "old", "--x", "--continue-from=older"},
            "new") == V{"racelab", "live", "torch", "--continue-from", "new", "--x"});
  CHECK_THROWS_AS(live::continuation_argv(V{"racelab", "explore"}, "h"), racelab::InputError);

  const auto dir = std::filesystem::temp_directory_path() / "racelab-test-handover";
  std::filesystem::create_directories(dir);
  live::Handover h;
  h.strategy = R"({"stack":[]})";
  h.hash = "abc";
  h.processes = 2;
  h.tally.add(3, 11);
  h.tally.add(4, 11);
  h.tally.add(5, 12);
  h.seconds = 1.5;
  h.wall_seconds = 61.25;
  h.kinds = {{kinds::kDeadlock, 1}};
  h.settled = 4;
  h.found.push_back({kinds::kDeadlock, 1, 4, "s.json", nlohmann::ordered_json::array()});
  live::write_handover(dir / "h.json", h);
  const live::Handover back = live::read_handover((dir / "h.json").string());
  CHECK(back.strategy == h.strategy);
  CHECK(back.hash == "abc");
  CHECK(back.processes == 2);
  CHECK(back.tally.executions == 3);
  CHECK(back.tally.steps == 12);
  CHECK(back.tally.coverage.classes() == 2);
  CHECK(back.tally.coverage.executions() == 3);
  CHECK(back.kinds == h.kinds);
  CHECK(back.settled == 4);
  CHECK(back.seconds == 1.5);
  CHECK(back.wall_seconds == 61.25);
  REQUIRE(back.found.size() == 1);
  CHECK(back.found[0].schedule == "s.json");
  std::ofstream(dir / "bad.json") << "{\"format\": \"racelab-live-handover\"}";
  CHECK_THROWS_AS(live::read_handover((dir / "bad.json").string()), racelab::InputError);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a search going on in fresh processes counts their starts against its time limit",
          "[search]") {
  live::SearchOptions a;
  a.all_findings = true;
  a.time_limit = 60;
  // The first process: its executions.
  CHECK(live::time_so_far(a, 5.5, 40) == 5.5);
  // A fresh one: the earlier processes' whole time (5 s of executions, 55 s of torch's imports)
  // and its own, start included, whatever its executions took.
  auto carried = std::make_shared<live::Handover>();
  carried->seconds = 5;
  carried->wall_seconds = 55;
  a.carried = carried;
  CHECK(live::time_so_far(a, 0.5, 6) == 61);
  CHECK(live::time_so_far(a, 0, 2) == 57);
}

TEST_CASE("a replayed execution is the result, failed or not", "[search]") {
  live::StopAtFailure clean(/*expect_deadlock=*/false, /*replaying=*/true);
  CHECK(keep(clean, 0, ended_with({})));
  REQUIRE(clean.failure);
  CHECK_FALSE(clean.last);
  CHECK_FALSE(clean.stopped_at_failure);

  // Replaying an exception while a deadlock is expected: the replay is the result, not an other.
  live::StopAtFailure failed(/*expect_deadlock=*/true, /*replaying=*/true);
  CHECK_FALSE(keep(failed, 0, ended_with({kinds::kException})));
  REQUIRE(failed.failure);
  CHECK_FALSE(failed.other);
  CHECK(failed.stopped_at_failure);
}

TEST_CASE("A live search runs the exploration until the deadlock, or proves the fix", "[live]") {
  live::SearchOptions a;
  a.strategy = sched::StrategyKind::kDfs;
  a.executions = 100;
  a.hang_timeout = 2;
  a.settle_ms = 2;
  std::vector<std::string> ended;  // how each execution ended, as the job's hook saw it
  live::JobInfo info;
  info.after_execution = [&ended](std::uint64_t execution, const std::string& how) {
    CHECK(execution == ended.size());
    ended.push_back(how);
  };
  std::uint64_t progress_calls = 0;
  auto progress = [&progress_calls](std::uint64_t done, std::uint64_t budget) {
    CHECK(done == ++progress_calls);
    CHECK(budget == 100);
  };

  LockOrder bad(false);
  auto dfs = sched::make_dfs(2);
  const live::Outcome found = live::search(
      a, info, bad, *dfs, false, [] { return false; }, progress);
  REQUIRE(found.kept.failure);
  CHECK(found.kept.failure->found("deadlock"));
  CHECK(found.kept.stopped_at_failure);
  CHECK(found.executions == found.kept.failure_execution + 1);
  CHECK(found.coverage.executions() == found.executions);
  CHECK(ended.size() == found.executions);
  CHECK(ended.back() == "deadlock");
  CHECK(progress_calls == found.executions);
  CHECK(live::exit_code(live::judge(a, found)) == racelab::kExitFound);

  ended.clear();
  progress_calls = 0;
  LockOrder good(true);
  auto dfs2 = sched::make_dfs(2);
  const live::Outcome proof = live::search(
      a, info, good, *dfs2, false, [] { return false; }, progress);
  CHECK_FALSE(proof.kept.failure);
  REQUIRE(proof.kept.last);
  CHECK(proof.exhausted());
  CHECK(proof.executions > 1);
  CHECK(ended == std::vector<std::string>(proof.executions, "complete"));
  CHECK(live::exit_code(live::judge(a, proof)) == racelab::kExitOk);
}

TEST_CASE("A live replay that diverges is bad input naming the schedule", "[live]") {
  live::SearchOptions a;
  a.replay = "diverging.json";
  a.executions = 1;
  LockOrder bad(false);
  sched::ReplayStrategy replay({{"t9", "start"}}, sched::OnDivergence::kFail, nullptr);
  try {
    live::search(a, {}, bad, replay, true, {}, {});
    FAIL("the replay did not diverge");
  } catch (const racelab::InputError& e) {
    CHECK(std::string(e.what()).find("diverging.json: ") == 0);
  }
}

TEST_CASE("a replay whose steps all matched but ended before its recorded kind is a divergence",
          "[search]") {
  live::SearchOptions a;
  a.replay = "cut.json";
  a.executions = 1;
  a.recorded = {.kind = kinds::kDeadlock, .steps = 2, .hash = "h"};
  live::Outcome o(live::StopAtFailure(/*expect_deadlock=*/false, /*replaying=*/true));
  live::Result clean = ended_with({});
  clean.choices = {0, 1, 0, 1, 1};  // went on past the schedule's 2 steps
  keep(o.kept, 0, clean);
  const results::Verdict j = live::judge(a, o);
  CHECK(live::exit_code(j) == racelab::kExitFound);
  CHECK(j.why == results::Why::kScheduleEnded);
  CHECK(j.reason.find("diverged: the schedule ended at step 2 before its recorded "
                      "deadlock happened") == 0);
  // The whole schedule, its deadlock reproduced: no such divergence.
  live::Outcome whole(live::StopAtFailure(false, true));
  live::Result dead = ended_with({kinds::kDeadlock});
  dead.choices = {0, 1};
  keep(whole.kept, 0, dead);
  CHECK(live::judge(a, whole).why != results::Why::kScheduleEnded);
  CHECK(live::exit_code(live::judge(a, whole)) == racelab::kExitFound);
}

TEST_CASE("a search for a deadlock that did not finish without it is inconclusive, not failed",
          "[search]") {
  live::SearchOptions a;
  a.strategy = sched::StrategyKind::kRandom;
  a.expect = results::LiveExpect::kDeadlock;
  live::Outcome o(live::StopAtFailure(/*expect_deadlock=*/true, /*replaying=*/false));
  keep(o.kept, 0, ended_with({}));
  o.stop = sched::StopReason::kTimeLimit;
  CHECK(live::judge(a, o).why == results::Why::kUnfinished);
  CHECK(live::exit_code(live::judge(a, o)) == racelab::kExitFound);
  o.stop = sched::StopReason::kBudget;  // a sampling search that ran all its executions
  CHECK(live::judge(a, o).why != results::Why::kUnfinished);
  CHECK(live::exit_code(live::judge(a, o)) == racelab::kExitFound);
  a.strategy = sched::StrategyKind::kDfs;  // a proving search at its cap did not finish
  CHECK(live::judge(a, o).why == results::Why::kUnfinished);
}

TEST_CASE("a replay's divergence names a changed subject as its likely cause", "[search]") {
  const live::Recorded recorded{.kind = kinds::kDeadlock, .steps = 3, .hash = "aaaa"};
  CHECK(live::divergence_hint(recorded, sched::kLivePythonSubject, "bbbb") ==
        "the script, its interposition table or its options changed since recording, content "
        "hash aaaa now bbbb: that change is the likely cause; record a new schedule");
  CHECK(live::divergence_hint(recorded, sched::kLiveTorchSubject, "bbbb")
            .find("the build or the workload changed") == 0);
  CHECK(live::divergence_hint(recorded, sched::kLivePythonSubject, "aaaa")
            .find("foreign threads' timing") != std::string::npos);
}
