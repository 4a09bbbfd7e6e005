// The bug corpus: each bug is found by random and PCT within a stated number of executions for
// fixed seeds, and DFS proves each fixed twin clean, exhausting its bounded space.
#include "catch.h"
#include "corpus.h"
#include "sched/explore.h"

using namespace racelab;
using namespace racelab::sched;

namespace {

ExploreResult run(Subject& s, StrategyKind kind, std::uint64_t iterations, std::uint64_t seed = 1,
                  int depth = 3, int preemptions = 2) {
  ExploreOptions o;
  o.strategy.kind = kind;
  o.strategy.seed = seed;
  o.strategy.depth = depth;
  o.strategy.max_preemptions = preemptions;
  o.iterations = iterations;
  o.shrink = false;
  return explore(s, o);
}

// The first execution (0-based) that finds `kind`, or -1.
long first(const ExploreResult& r, const char* kind) {
  const FoundKind* f = r.find(kind);
  return f == nullptr ? -1 : static_cast<long>(f->execution);
}

}  // namespace

TEST_CASE("lost update: random and PCT find it, DFS proves the fix", "[corpus]") {
  corpus::LostUpdate bug(false), fixed(true);
  for (std::uint64_t seed : {1, 2, 3}) {
    auto r = run(bug, StrategyKind::kRandom, 100, seed);
    CHECK(first(r, "assertion") >= 0);
    CHECK(first(r, "assertion") < 20);
    CHECK(first(r, "data_race") >= 0);
    auto p = run(bug, StrategyKind::kPct, 100, seed);
    CHECK(first(p, "assertion") >= 0);
    CHECK(first(p, "assertion") < 20);
  }
  auto d = run(fixed, StrategyKind::kDfs, 100000);
  CHECK(d.exhausted());
  CHECK(d.found.empty());
  auto db = run(bug, StrategyKind::kDfs, 100000);
  CHECK(db.exhausted());
  CHECK(first(db, "assertion") >= 0);
}

TEST_CASE("lock-order inversion: deadlock with its cycle; DFS proves the fix", "[corpus]") {
  corpus::LockOrderInversion bug(false), fixed(true);
  for (std::uint64_t seed : {1, 2, 3}) {
    CHECK(first(run(bug, StrategyKind::kRandom, 100, seed), "deadlock") >= 0);
    CHECK(first(run(bug, StrategyKind::kRandom, 100, seed), "deadlock") < 30);
    CHECK(first(run(bug, StrategyKind::kPct, 100, seed), "deadlock") >= 0);
    CHECK(first(run(bug, StrategyKind::kPct, 100, seed), "deadlock") < 30);
  }
  auto r = run(bug, StrategyKind::kRandom, 100);
  const FoundKind* f = r.find("deadlock");
  REQUIRE(f != nullptr);
  CHECK(f->finding.cycle.size() == 2);
  CHECK(f->finding.message.find("t0 holds A and waits for B held by t1") != std::string::npos);
  CHECK(f->finding.message.find("t1 holds B and waits for A held by t0") != std::string::npos);
  auto d = run(fixed, StrategyKind::kDfs, 100000);
  CHECK(d.exhausted());
  CHECK(d.found.empty());
}

TEST_CASE("check-then-act lazy init: double compile found; DFS proves the fix", "[corpus]") {
  corpus::LazyInit bug(false), fixed(true);
  for (std::uint64_t seed : {1, 2, 3}) {
    CHECK(first(run(bug, StrategyKind::kRandom, 100, seed), "duplicate_compile") >= 0);
    CHECK(first(run(bug, StrategyKind::kRandom, 100, seed), "duplicate_compile") < 30);
    CHECK(first(run(bug, StrategyKind::kPct, 100, seed), "duplicate_compile") >= 0);
    CHECK(first(run(bug, StrategyKind::kPct, 100, seed), "duplicate_compile") < 30);
  }
  auto d = run(fixed, StrategyKind::kDfs, 100000);
  CHECK(d.exhausted());
  CHECK(d.found.empty());
}

TEST_CASE("ordering bug of depth 3: PCT depth 3 finds it, depth 2 cannot", "[corpus]") {
  corpus::OrderingDepth3 bug(false), fixed(true);
  for (std::uint64_t seed : {1, 2, 3}) {
    auto p3 = run(bug, StrategyKind::kPct, 2000, seed, 3);
    INFO("seed " << seed);
    CHECK(first(p3, "assertion") >= 0);
    CHECK(first(p3, "assertion") < 500);
  }
  // One change point can order at most two of the three events: PCT depth 2 never finds it.
  CHECK(first(run(bug, StrategyKind::kPct, 2000, 1, 2), "assertion") == -1);
  // The bug needs two preemptions: DFS finds it with a bound of 2 and exhausts a bound of 1.
  auto d1 = run(bug, StrategyKind::kDfs, 100000, 1, 3, 1);
  CHECK(d1.exhausted());
  CHECK(first(d1, "assertion") == -1);
  CHECK(first(run(bug, StrategyKind::kDfs, 100000, 1, 3, 2), "assertion") >= 0);
  auto d = run(fixed, StrategyKind::kDfs, 100000, 1, 3, 3);
  CHECK(d.exhausted());
  CHECK(d.found.empty());
}

TEST_CASE("compile_lock / autograd worker deadlock: found; sequential warmup proven clean",
          "[corpus]") {
  corpus::CompileLockDeadlock bug(false), fixed(true);
  for (std::uint64_t seed : {1, 2, 3}) {
    CHECK(first(run(bug, StrategyKind::kRandom, 500, seed), "deadlock") >= 0);
    CHECK(first(run(bug, StrategyKind::kRandom, 500, seed), "deadlock") < 100);
    CHECK(first(run(bug, StrategyKind::kPct, 500, seed), "deadlock") >= 0);
    CHECK(first(run(bug, StrategyKind::kPct, 500, seed), "deadlock") < 100);
  }
  auto r = run(bug, StrategyKind::kPct, 500);
  const FoundKind* f = r.find("deadlock");
  REQUIRE(f != nullptr);
  // The cycle of docs/facts.md: a drafter holds compile_lock and waits on the worker, which runs
  // the other drafter's backward and waits for compile_lock.
  CHECK(f->finding.cycle.size() == 2);
  CHECK(f->finding.message.find("holds compile_lock and waits for job") != std::string::npos);
  CHECK(f->finding.message.find("(backward from drafter 0.") != std::string::npos);
  CHECK(f->finding.message.find("and waits for compile_lock held by drafter") != std::string::npos);
  auto d = run(fixed, StrategyKind::kDfs, 1000000);
  CHECK(d.exhausted());
  CHECK(d.found.empty());
}
