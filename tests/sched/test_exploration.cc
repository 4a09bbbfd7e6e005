// The one sequential exploration (sched/exploration.h) with a stand-in runner and keep policy,
// and the model's keep policy (KeepFirstOfEachKind) on the corpus.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "catch.h"
#include "corpus.h"
#include "sched/exploration.h"
#include "sched/explore.h"
#include "sched/strategies/strategies.h"

namespace racelab::sched {
namespace {

// A search over `space` executions: it has none left past them (as an exhausted dfs).
class Countdown : public Strategy {
 public:
  explicit Countdown(std::uint64_t space) : space_(space) {}
  bool begin_execution(std::uint64_t index) override { return index < space_; }
  ThreadId pick(const Decision& d) override { return d.enabled.front(); }
  std::string describe() const override { return "countdown"; }

 private:
  std::uint64_t space_;
};

struct Record {
  std::uint64_t execution = 0;
};

// Execution i takes i + 1 steps and shows interleaving class i % `classes`.
struct StandInRunner {
  std::uint64_t classes = 3;
  std::optional<Record> run(Strategy& strategy, std::uint64_t execution) const {
    if (!strategy.begin_execution(execution)) return std::nullopt;
    return Record{execution};
  }
  static std::uint64_t steps(const Record& r) { return r.execution + 1; }
  std::uint64_t fingerprint(const Record& r) const { return r.execution % classes; }
};

// Keeps every execution it sees; ends the exploration after execution `end_after`.
struct KeepAll {
  std::optional<std::uint64_t> end_after;
  std::vector<std::uint64_t> seen;
  bool keep(std::uint64_t execution, Record& r) {
    seen.push_back(r.execution);
    CHECK(r.execution == execution);
    return execution != end_after;
  }
};

Budget cap(std::uint64_t executions) { return Budget(executions, 0, {}); }

// Two threads pass one point; where t1 passes first, the execution shows two kinds at once.
class TwoKindsAtOnce : public Subject {
 public:
  std::string name() const override { return "two-kinds-at-once"; }
  std::string content_hash() const override { return "1"; }
  void setup(Context& ctx) override {
    order_.clear();
    point_ = ctx.label("pass");
    ctx.spawn("t0", pass(ctx, 0));
    ctx.spawn("t1", pass(ctx, 1));
  }
  void finish(Context& ctx) override {
    if (order_.front() != 1) return;
    ctx.report("t1-first", "t1 passed first");
    ctx.report("t1-ahead", "t0 passed after t1");
  }

 private:
  Task pass(Context& ctx, int id) {
    co_await ctx.point(point_);
    order_.push_back(id);
  }
  int point_ = -1;
  std::vector<int> order_;
};

}  // namespace

TEST_CASE("the exploration counts executions, steps and classes up to the cap", "[exploration]") {
  StandInRunner runner;
  Countdown strategy(100);
  std::vector<std::uint64_t> progress;
  const auto out = explore_executions(runner, KeepAll{}, strategy, cap(10), false,
                                      [&](const Exploration<KeepAll>& so_far) {
                                        progress.push_back(so_far.executions);
                                        CHECK(so_far.kept.seen.size() == so_far.executions);
                                      });
  CHECK(out.executions == 10);
  CHECK(out.steps == 55);  // 1 + 2 + ... + 10
  CHECK(out.coverage.executions() == 10);
  CHECK(out.coverage.classes() == 3);
  CHECK(out.stop == StopReason::kBudget);
  CHECK(out.kept.seen == std::vector<std::uint64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  CHECK(progress == std::vector<std::uint64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
}

TEST_CASE("a keep policy that ends the exploration has its last execution counted",
          "[exploration]") {
  StandInRunner runner;
  Countdown strategy(100);
  const auto out =
      explore_executions(runner, KeepAll{.end_after = 4}, strategy, cap(10), true, [](auto&) {});
  CHECK(out.executions == 5);
  CHECK(out.kept.seen.back() == 4);
  // The budget did not stop it: the policy knows that it did.
  CHECK(out.stop == StopReason::kBudget);
  CHECK_FALSE(out.exhausted());
}

TEST_CASE("a strategy with nothing left exhausts the exploration; the cap of a proving one too",
          "[exploration]") {
  StandInRunner runner;
  auto run = [&](std::uint64_t space, std::uint64_t executions, bool proves) {
    Countdown strategy(space);
    return explore_executions(runner, KeepAll{}, strategy, cap(executions), proves, [](auto&) {});
  };
  const auto short_space = run(6, 100, false);
  CHECK(short_space.executions == 6);
  CHECK(short_space.exhausted());
  // A space exactly the cap: a proving strategy has covered it, a sampling one was cut.
  CHECK(run(10, 10, true).exhausted());
  CHECK(run(10, 10, false).stop == StopReason::kBudget);
  CHECK(run(11, 10, true).stop == StopReason::kBudget);
}

TEST_CASE("an interrupt stops the exploration before the next execution", "[exploration]") {
  StandInRunner runner;
  Countdown strategy(100);
  std::uint64_t ran = 0;
  const Budget budget(100, 0, [&ran] { return ran == 3; });
  const auto out = explore_executions(runner, KeepAll{}, strategy, budget, false,
                                      [&](const auto& so_far) { ran = so_far.executions; });
  CHECK(out.executions == 3);
  CHECK(out.interrupted());
}

TEST_CASE("the model keeps the first execution of each finding kind, each kind its own",
          "[exploration]") {
  TwoKindsAtOnce subject;
  const ModelRunner runner(subject, {});
  KeepFirstOfEachKind keep;
  StrategyParams params;
  params.kind = StrategyKind::kRandom;
  auto strategy = make_strategy(params);
  std::map<std::string, std::uint64_t> first;  // kind -> the first execution that showed it
  std::set<std::uint64_t> several;             // executions that showed several new kinds
  for (std::uint64_t i = 0; i < 50; ++i) {
    auto r = runner.run(*strategy, i);
    REQUIRE(r);
    std::size_t fresh = 0;
    for (const Finding& f : r->findings) fresh += first.emplace(f.kind, i).second ? 1 : 0;
    if (fresh > 1) several.insert(i);
    CHECK(keep.keep(i, *r));  // the model's exploration always goes on
  }
  REQUIRE(first.size() == 2);
  REQUIRE_FALSE(several.empty());
  const std::vector<FoundKind> found = std::move(keep).found(runner);
  REQUIRE(found.size() == 2);
  for (std::size_t k = 0; k < found.size(); ++k) {
    const FoundKind& fk = found[k];
    CHECK(fk.execution == first.at(fk.finding.kind));
    CHECK(fk.result.found(fk.finding.kind));
    CHECK(fk.preemptions == fk.result.preemptions);
    if (k > 0) CHECK(found[k - 1].execution <= fk.execution);  // in order of discovery
  }
  // Kinds found together own copies of the one execution.
  for (std::size_t k = 0; k + 1 < found.size(); ++k) {
    const FoundKind& a = found[k];
    const FoundKind& b = found[k + 1];
    if (a.execution != b.execution) continue;
    CHECK(a.result.exec.get() != b.result.exec.get());
    CHECK(a.result.trace_text() == b.result.trace_text());
  }
}

TEST_CASE("a model exploration is the loop with the model's runner and keep policy",
          "[exploration]") {
  corpus::LockOrderInversion subject(false);
  ExploreOptions o;
  o.strategy.kind = StrategyKind::kPct;
  o.iterations = 200;
  o.shrink = false;
  const ExploreResult explored = explore(subject, o);

  const ModelRunner runner(subject, o.run);
  auto strategy = make_strategy(o.strategy);
  auto loop =
      explore_executions(runner, KeepFirstOfEachKind(), *strategy, o.budget(), false, [](auto&) {});
  CHECK(explored.executions == loop.executions);
  CHECK(explored.steps == loop.steps);
  CHECK(explored.interleavings()->classes == loop.coverage.classes());
  const std::vector<FoundKind> kept = std::move(loop.kept).found(runner);
  REQUIRE(explored.found.size() == kept.size());
  for (std::size_t k = 0; k < explored.found.size(); ++k) {
    CHECK(explored.found[k].finding.kind == kept[k].finding.kind);
    CHECK(explored.found[k].execution == kept[k].execution);
    CHECK(explored.found[k].result.trace_text() == kept[k].result.trace_text());
  }
}

TEST_CASE("workers' keep policies merged in any order keep what the sequential loop keeps",
          "[exploration]") {
  TwoKindsAtOnce subject;
  const ModelRunner runner(subject, {});
  StrategyParams params;
  params.kind = StrategyKind::kRandom;
  auto strategy = make_strategy(params);
  KeepFirstOfEachKind sequential;
  std::vector<KeepFirstOfEachKind> workers(3);  // execution i ran on worker i % 3
  for (std::uint64_t i = 0; i < 50; ++i) {
    auto r = runner.run(*strategy, i);
    REQUIRE(r);
    workers[i % 3].offer({std::nullopt, i, 0}, *r);
    CHECK(sequential.keep(i, *r));
  }
  KeepFirstOfEachKind merged;
  for (std::size_t w : {2u, 0u, 1u}) merged.merge(std::move(workers[w]));
  const std::vector<FoundKind> a = std::move(sequential).found(runner);
  const std::vector<FoundKind> b = std::move(merged).found(runner);
  REQUIRE(a.size() == 2);
  REQUIRE(b.size() == a.size());
  for (std::size_t k = 0; k < a.size(); ++k) {
    CHECK(b[k].finding.kind == a[k].finding.kind);
    CHECK(b[k].execution == a[k].execution);
    CHECK(b[k].result.trace_text() == a[k].result.trace_text());
  }
  // A piece placed in the order: positions moved, and those past the cut left out.
  KeepFirstOfEachKind piece;
  for (std::uint64_t i = 0; i < 50; ++i)
    piece.offer({std::nullopt, i, 0}, *runner.run(*strategy, i));
  KeepFirstOfEachKind placed;
  placed.merge(std::move(piece), [](FindingPosition at) -> std::optional<FindingPosition> {
    if (at.execution >= 1) return std::nullopt;
    return FindingPosition{7, at.execution, at.place};
  });
  for (const auto& [kind, first] : placed.firsts()) {
    CHECK(first.at.subtree == std::optional<std::uint64_t>(7));
    CHECK(first.at.execution == 0);
  }
}

}  // namespace racelab::sched
