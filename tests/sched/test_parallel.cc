// Splitting an exploration: the same findings, first executions, preemptions, traces and counts
// for any number of worker threads, and shards whose union is the single-worker exploration.
#include <memory>
#include <set>

#include "catch.h"
#include "corpus.h"
#include "sched/explore.h"

using namespace racelab;
using namespace racelab::sched;

namespace {

template <class S>
SubjectFactory factory(bool fixed) {
  return [fixed] { return std::make_unique<S>(fixed); };
}

ExploreOptions options(StrategyKind kind, std::uint64_t iterations, unsigned jobs = 1,
                       std::uint64_t shard = 0, std::uint64_t shards = 1) {
  ExploreOptions o;
  o.strategy.kind = kind;
  o.strategy.seed = 7;
  o.strategy.depth = 3;
  o.strategy.max_preemptions = 2;
  o.iterations = iterations;
  o.partition = {shard, shards, jobs};
  return o;
}

void check_same(const ExploreResult& a, const ExploreResult& b) {
  CHECK(a.executions == b.executions);
  CHECK(a.steps == b.steps);
  CHECK(a.stop == b.stop);
  REQUIRE(a.interleavings().has_value() == b.interleavings().has_value());
  if (a.interleavings()) {
    CHECK(a.interleavings()->classes == b.interleavings()->classes);
    CHECK(a.interleavings()->seen_once == b.interleavings()->seen_once);
    CHECK(a.interleavings()->seen_twice == b.interleavings()->seen_twice);
  }
  REQUIRE(a.found.size() == b.found.size());
  for (std::size_t k = 0; k < a.found.size(); ++k) {
    INFO(a.found[k].finding.kind);
    CHECK(a.found[k].finding.kind == b.found[k].finding.kind);
    CHECK(a.found[k].execution == b.found[k].execution);
    CHECK(a.found[k].preemptions == b.found[k].preemptions);
    CHECK(a.found[k].original_preemptions == b.found[k].original_preemptions);
    CHECK(a.found[k].finding.message == b.found[k].finding.message);
    CHECK(a.found[k].result.trace_text() == b.found[k].result.trace_text());
  }
}

}  // namespace

TEST_CASE("parallel: --jobs gives the single-worker result for random, PCT and DFS", "[parallel]") {
  struct Subject_ {
    const char* name;
    SubjectFactory make;
  };
  const Subject_ subjects[] = {{"lost-update", factory<corpus::LostUpdate>(false)},
                               {"lock-order", factory<corpus::LockOrderInversion>(false)},
                               {"lazy-init", factory<corpus::LazyInit>(false)},
                               {"lazy-init-fixed", factory<corpus::LazyInit>(true)}};
  for (const auto& s : subjects) {
    for (StrategyKind kind : {StrategyKind::kRandom, StrategyKind::kPct, StrategyKind::kDfs}) {
      INFO(s.name << " " << strategy_name(kind));
      const ExploreResult one = explore(s.make, options(kind, 300));
      CHECK((!one.found.empty() || std::string(s.name) == "lazy-init-fixed"));
      for (unsigned jobs : {2u, 3u}) {
        INFO("jobs " << jobs);
        check_same(one, explore(s.make, options(kind, 300, jobs)));
      }
    }
  }
}

TEST_CASE("parallel: shards of random and PCT cover every execution once", "[parallel]") {
  const auto make = factory<corpus::LostUpdate>(false);
  for (StrategyKind kind : {StrategyKind::kRandom, StrategyKind::kPct}) {
    const ExploreResult one = explore(make, options(kind, 200));
    std::uint64_t executions = 0, steps = 0;
    std::set<std::string> kinds;
    for (std::uint64_t k = 0; k < 3; ++k) {
      const ExploreResult part = explore(make, options(kind, 200, 2, k, 3));
      executions += part.executions;
      steps += part.steps;
      for (const auto& f : part.found) {
        kinds.insert(f.finding.kind);
        CHECK(f.execution % 3 == k);  // this shard's indices only
        const FoundKind* whole = one.find(f.finding.kind);
        REQUIRE(whole != nullptr);
        CHECK(f.execution >= whole->execution);  // never earlier than the true first
        if (f.execution == whole->execution)
          CHECK(f.result.trace_text() == whole->result.trace_text());
      }
    }
    CHECK(executions == one.executions);
    CHECK(steps == one.steps);
    CHECK(kinds.size() == one.found.size());
  }
}

TEST_CASE("parallel: DFS subtrees of all shards are exactly the single-worker search",
          "[parallel]") {
  const auto make = factory<corpus::LazyInit>(true);  // clean: the whole bounded space is searched
  const ExploreResult one = explore(make, options(StrategyKind::kDfs, 1000000));
  REQUIRE(one.exhausted());
  std::uint64_t executions = 0, steps = 0, subtrees = 0;
  for (std::uint64_t k = 0; k < 4; ++k) {
    const ExploreResult part = explore(make, options(StrategyKind::kDfs, 1000000, 2, k, 4));
    CHECK(part.subtree_count > 4);
    CHECK(part.exhausted());
    for (const auto& t : part.subtrees) {
      CHECK(t.index % 4 == k);
      CHECK(t.complete);
      executions += t.executions;
      steps += t.steps;
      ++subtrees;
    }
    CHECK(part.found.empty());
  }
  CHECK(executions == one.executions);
  CHECK(steps == one.steps);
  // A budget that cuts the search: the split run stops at the same place.
  const ExploreResult cut = explore(make, options(StrategyKind::kDfs, one.executions / 2));
  check_same(cut, explore(make, options(StrategyKind::kDfs, one.executions / 2, 3)));
  CHECK(cut.stop == StopReason::kBudget);
}

namespace {

// Every execution of `strategy` on `subject`, as its choices.
std::vector<std::vector<ThreadId>> all_runs(Subject& subject, Strategy& strategy) {
  std::vector<std::vector<ThreadId>> runs;
  for (std::uint64_t i = 0;; ++i) {
    auto run = run_execution(subject, strategy, i, RunOptions{});
    if (!run) return runs;
    runs.push_back(run->choices);
  }
}

}  // namespace

TEST_CASE("parallel: a DFS worker that gives pieces away keeps the single-worker order",
          "[parallel]") {
  corpus::OrderingDepth3 subject(false, 8);
  // The subtrees of the top part, in order, are the whole search; the first holds most of it and
  // is the one split below.
  auto top = make_dfs_splitter(2)->top_part(1);
  for (std::uint64_t i = 0; run_execution(subject, top->enumerate(), i, RunOptions{}); ++i) {
  }
  const Subtrees leaves = top->subtrees();
  std::vector<std::vector<ThreadId>> in_order;
  for (const auto& leaf : leaves) {
    for (auto& r : all_runs(subject, *leaf->search())) in_order.push_back(std::move(r));
  }
  auto whole = make_dfs(2);
  CHECK(in_order == all_runs(subject, *whole));
  const std::shared_ptr<const Subtree> first = leaves.front();
  const auto expected = all_runs(subject, *first->search());
  INFO("executions " << expected.size());
  REQUIRE(expected.size() > 100);
  // Split after `at` executions, with a room that picks shallow, middle and deep decisions; the
  // owner's executions then each piece's, in the order given, are the whole subtree's search.
  for (std::uint64_t at :
       {std::size_t{1}, std::size_t{2}, expected.size() / 10, expected.size() / 2}) {
    for (std::uint64_t room :
         {UINT64_MAX, std::uint64_t{2000}, std::uint64_t{40}, std::uint64_t{0}}) {
      INFO("split after " << at << " executions, room " << room);
      auto owner = first->search();
      std::vector<std::vector<ThreadId>> got;
      Subtrees pieces;
      for (std::uint64_t i = 0;; ++i) {
        if (i == at) pieces = owner->split(room);
        auto run = run_execution(subject, *owner, i, RunOptions{});
        if (!run) break;
        got.push_back(run->choices);
      }
      if (room > 0) CHECK(!pieces.empty());
      const std::size_t kept = got.size();
      for (const auto& p : pieces) {
        auto piece = p->search();
        for (auto& r : all_runs(subject, *piece)) got.push_back(std::move(r));
      }
      CHECK((pieces.empty() || kept < expected.size()));
      CHECK(got == expected);
    }
  }
}

TEST_CASE("parallel: capped DFS with jobs stops where the single worker stops", "[parallel]") {
  // The bounded space of two lazy drafters is a few hundred executions, very uneven across
  // subtrees: caps inside the first subtree, across several, and beyond the whole space.
  const SubjectFactory make = [] { return std::make_unique<corpus::OrderingDepth3>(false, 8); };
  const ExploreResult full = explore(make, options(StrategyKind::kDfs, 100000000));
  REQUIRE(full.exhausted());
  for (std::uint64_t cap :
       {std::uint64_t{1}, std::uint64_t{9}, std::uint64_t{150}, full.executions / 3,
        full.executions - 1, full.executions, full.executions * 2}) {
    const ExploreResult one = explore(make, options(StrategyKind::kDfs, cap));
    for (unsigned jobs : {2u, 4u}) {
      INFO("cap " << cap << ", jobs " << jobs);
      check_same(one, explore(make, options(StrategyKind::kDfs, cap, jobs)));
    }
  }
}

namespace {

// Finds an assertion, but every run takes one more step than the one before: not deterministic.
class Drifting : public sched::Subject {
 public:
  std::string name() const override { return "drifting"; }
  std::string content_hash() const override { return "drifting/1"; }
  void setup(sched::Context& ctx) override {
    label_ = ctx.label("tick");
    ++runs_;
    ctx.spawn("a", body(ctx));
  }

 private:
  sched::Task body(sched::Context& ctx) {
    for (int k = 0; k < runs_; ++k) co_await ctx.point(label_);
    ctx.check(false, "always fails");
  }
  int label_ = -1;
  int runs_ = 0;
};

}  // namespace

TEST_CASE("check_determinism re-executes findings and reports a subject that drifts",
          "[parallel]") {
  ExploreOptions o = options(StrategyKind::kRandom, 3);
  o.shrink = false;
  o.check_determinism = true;
  corpus::LockOrderInversion steady(false);
  const ExploreResult ok = explore(steady, o);
  CHECK(ok.determinism_checked == ok.found.size());
  CHECK(ok.determinism_failures.empty());
  Drifting drifting;
  const ExploreResult bad = explore(drifting, o);
  REQUIRE(bad.determinism_checked == 1);
  REQUIRE(bad.determinism_failures.size() == 1);
  CHECK(bad.determinism_failures[0].find("assertion: re-executing the schedule diverged at step") ==
        0);
}
