// POS and SURW (determinism per seed, replayable schedules, the lazy-2 deadlock), the interleaving
// coverage counter on programs with a known number of classes, and its estimators.
#include <cmath>
#include <cstdlib>
#include <set>
#include <string>

#include "catch.h"
#include "corpus.h"
#include "report/schedule_file.h"
#include "results/scenario_run.h"
#include "run/explore.h"
#include "sched/coverage.h"
#include "sched/explore.h"
#include "sched/schedule.h"

using namespace racelab;
using namespace racelab::sched;

namespace {

std::string source_dir() {
  const char* dir = std::getenv("RACELAB_SOURCE_DIR");
  return dir != nullptr ? dir : ".";
}

bool near(double a, double b) { return std::abs(a - b) < 1e-9; }

ExecutionResult once(Subject& s, Strategy& strategy, std::uint64_t index) {
  return std::move(*run_execution(s, strategy, index));
}

// `threads` threads each lock and unlock one mutex once (and `independent` more threads each lock
// a mutex of their own): the hand-off orders of the shared mutex are the threads' permutations.
class OneMutex : public Subject {
 public:
  OneMutex(int threads, int independent) : threads_(threads), independent_(independent) {}
  std::string name() const override { return "one-mutex"; }
  std::string content_hash() const override { return "one-mutex/1"; }
  void setup(Context& ctx) override {
    const int shared = ctx.mutex("shared");
    for (int t = 0; t < threads_; ++t) ctx.spawn("t" + std::to_string(t), body(ctx, shared));
    for (int t = 0; t < independent_; ++t) {
      const int own = ctx.mutex("own " + std::to_string(t));
      ctx.spawn("own" + std::to_string(t), body(ctx, own));
    }
  }

 private:
  Task body(Context& ctx, int m) {
    co_await ctx.lock(m);
    co_await ctx.unlock(m);
  }
  int threads_, independent_;
};

ExploreResult explore_with(Subject& s, StrategyKind kind, std::uint64_t iterations,
                           std::uint64_t seed = 1) {
  ExploreOptions o;
  o.strategy.kind = kind;
  o.strategy.seed = seed;
  o.strategy.max_preemptions = 16;
  o.iterations = iterations;
  o.shrink = false;
  return explore(s, o);
}

std::vector<std::string> traces(Subject& s, StrategyKind kind, std::uint64_t seed, int n) {
  StrategyParams p;
  p.kind = kind;
  p.seed = seed;
  auto strategy = make_strategy(p);
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(once(s, *strategy, i).trace_text());
  return out;
}

}  // namespace

TEST_CASE("pos and surw: the same seed gives the same executions, another seed others",
          "[pos][surw]") {
  corpus::CompileLockDeadlock subject(false, 3);
  for (StrategyKind kind : {StrategyKind::kPos, StrategyKind::kSurw}) {
    INFO(strategy_name(kind));
    // 100 executions: SURW learns from the first 8 and weights the 92 after them.
    const auto a = traces(subject, kind, 7, 100);
    CHECK(a == traces(subject, kind, 7, 100));
    CHECK(a != traces(subject, kind, 8, 100));
    // A clone runs execution i as the original does (what --jobs and --shard rely on).
    StrategyParams p;
    p.kind = kind;
    p.seed = 7;
    auto original = make_strategy(p);
    for (int i = 0; i < 70; ++i) (void)once(subject, *original, i);
    auto copy = original->clone();
    REQUIRE(copy != nullptr);
    CHECK(once(subject, *copy, 90).trace_text() == once(subject, *original, 90).trace_text());
  }
}

TEST_CASE("pos and surw: a found deadlock's schedule replays to the same trace", "[pos][surw]") {
  corpus::CompileLockDeadlock subject(false);
  for (StrategyKind kind : {StrategyKind::kPos, StrategyKind::kSurw}) {
    INFO(strategy_name(kind));
    StrategyParams p;
    p.kind = kind;
    auto strategy = make_strategy(p);
    std::optional<ExecutionResult> hit;
    // SURW's deadlock must come from its weighted walk, after the calibration executions.
    for (std::uint64_t i = 0; i < 2000 && !hit; ++i) {
      ExecutionResult r = once(subject, *strategy, i);
      if (r.found("deadlock") && (kind != StrategyKind::kSurw || i >= kSurwCalibration))
        hit = std::move(r);
    }
    REQUIRE(hit.has_value());
    Schedule s;
    s.racelab_version = "test";
    s.subject_name = subject.name();
    s.subject_hash = subject.content_hash();
    s.strategy_name = strategy_name(kind);
    s.strategy_description = strategy->describe();
    s.finding_kind = "deadlock";
    s.steps = replay_steps(*hit->exec);
    Schedule back = report::parse_schedule(report::schedule_to_json(s), "round-trip");
    ReplayStrategy replay(back.steps, OnDivergence::kFail);
    ExecutionResult again = once(subject, replay, 0);
    CHECK(again.found("deadlock"));
    CHECK(again.trace_text() == hit->trace_text());
  }
}

TEST_CASE("pos and surw find the lazy-2-drafters deadlock, also split over jobs", "[pos][surw]") {
  const model::Scenario sc =
      model::load_scenario(source_dir() + "/scenarios/deadlock/lazy-2-drafters.toml");
  for (StrategyKind kind : {StrategyKind::kPos, StrategyKind::kSurw}) {
    INFO(strategy_name(kind));
    ExploreOptions o = run::explore_options(sc);
    o.strategy.kind = kind;
    o.iterations = 300;
    o.shrink = false;
    const results::ScenarioRun one = run::run_scenario(sc, o);
    REQUIRE(one.result.find("deadlock") != nullptr);
    o.partition.jobs = 2;
    const results::ScenarioRun two = run::run_scenario(sc, o);
    REQUIRE(two.result.find("deadlock") != nullptr);
    CHECK(two.result.find("deadlock")->execution == one.result.find("deadlock")->execution);
    REQUIRE(one.result.interleavings().has_value());
    REQUIRE(two.result.interleavings().has_value());
    CHECK(two.result.interleavings()->classes == one.result.interleavings()->classes);
    CHECK(two.result.interleavings()->seen_once == one.result.interleavings()->seen_once);
  }
}

TEST_CASE("surw after calibration still finds the compile_lock deadlock", "[surw]") {
  corpus::CompileLockDeadlock subject(false, 3);
  auto surw = make_surw(3);
  int found = 0;
  for (std::uint64_t i = 0; i < kSurwCalibration + 200; ++i) {
    ExecutionResult r = once(subject, *surw, i);
    if (i >= kSurwCalibration) found += r.found("deadlock");
  }
  CHECK(found > 0);
}

TEST_CASE("coverage: three threads handing one mutex over show exactly 3! = 6 classes",
          "[coverage]") {
  OneMutex alone(3, 0);
  const ExploreResult dfs = explore_with(alone, StrategyKind::kDfs, 1000000);
  REQUIRE(dfs.exhausted());
  REQUIRE(dfs.interleavings().has_value());
  CHECK(dfs.interleavings()->classes == 6);
  CHECK(dfs.interleavings()->executions == dfs.executions);
  OneMutex subject(3, 2);  // the two threads on mutexes of their own add no class
  for (StrategyKind kind :
       {StrategyKind::kRandom, StrategyKind::kPct, StrategyKind::kPos, StrategyKind::kSurw}) {
    INFO(strategy_name(kind));
    const ExploreResult r = explore_with(subject, kind, 3000);
    REQUIRE(r.interleavings().has_value());
    CHECK(r.interleavings()->classes == 6);
    // Every class seen many times: nothing is estimated to remain.
    CHECK(r.interleavings()->seen_once == 0);
    CHECK(r.interleavings()->unseen_probability == 0);
    CHECK(r.interleavings()->estimated_classes == 6);
  }
  OneMutex two(2, 0);
  CHECK(explore_with(two, StrategyKind::kDfs, 1000000).interleavings()->classes == 2);
}

TEST_CASE("coverage: the fingerprint separates hand-off orders and nothing else", "[coverage]") {
  OneMutex subject(2, 0);
  // The four executions of dfs: two orders of the mutex, each twice (who starts first).
  std::set<std::uint64_t> fingerprints;
  auto dfs = make_dfs(16);
  std::uint64_t runs = 0;
  for (std::uint64_t i = 0;; ++i) {
    auto r = run_execution(subject, *dfs, i);
    if (!r) break;
    ++runs;
    fingerprints.insert(handoff_fingerprint(*r->exec));
  }
  CHECK(runs > 2);
  CHECK(fingerprints.size() == 2);
}

TEST_CASE("coverage estimators on known inputs: Good-Turing and Chao1", "[coverage]") {
  CHECK(good_turing_unseen(0, 0) == 0);
  CHECK(near(good_turing_unseen(10, 3), 0.3));
  CHECK(near(chao1(5, 2, 1), 7.0));  // 5 + 2^2 / (2 * 1)
  CHECK(near(chao1(5, 3, 0), 8.0));  // 5 + 3 * 2 / 2 (bias-corrected)
  CHECK(near(chao1(4, 0, 0), 4.0));
  Coverage c;
  for (std::uint64_t fp : {1, 1, 2, 3, 3, 3, 4}) c.add(fp);
  CHECK(c.executions() == 7);
  CHECK(c.classes() == 4);
  CHECK(c.seen_once() == 2);   // 2 and 4
  CHECK(c.seen_twice() == 1);  // 1
  CHECK(near(c.unseen_probability(), 2.0 / 7.0));
  CHECK(near(c.estimated_classes(), 6.0));
  Coverage d;
  d.add(2);
  d.add(5);
  c.merge(d);
  CHECK(c.executions() == 9);
  CHECK(c.classes() == 5);
  CHECK(c.seen_once() == 2);  // 4 and 5; 2 now twice
  CHECK(c.seen_twice() == 2);
}

TEST_CASE("coverage: on lazy-2-drafters the fingerprints are dpor's interleaving classes",
          "[coverage]") {
  const model::Scenario sc =
      model::load_scenario(source_dir() + "/scenarios/deadlock/lazy-2-drafters.toml");
  ExploreOptions o = run::explore_options(sc);
  o.shrink = false;
  o.strategy.kind = StrategyKind::kDpor;
  // Every Mazurkiewicz class, not one per alike drafters, and none left out for a state explored
  // before.
  sched::set_strategy_option(o.strategy, "--no-symmetry");
  sched::set_strategy_option(o.strategy, "--stateless");
  o.iterations = 100000;
  const results::ScenarioRun dpor = run::run_scenario(sc, o);
  REQUIRE(dpor.result.exhausted());
  REQUIRE(dpor.result.classes.has_value());
  // One execution per class, each with its own fingerprint...
  CHECK(dpor.result.interleavings()->classes == dpor.result.classes->classes);
  // ...and no sample shows more than there are.
  o.strategy.kind = StrategyKind::kPos;
  o.iterations = 20000;
  const results::ScenarioRun pos = run::run_scenario(sc, o);
  CHECK(pos.result.interleavings()->classes <= dpor.result.classes->classes);
  CHECK(pos.result.interleavings()->unseen_probability > 0);
}
