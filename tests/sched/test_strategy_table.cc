// The strategy table's capability queries and each row's own options (issue 38, S25-S26): what
// the callers outside src/sched/strategies/ ask instead of comparing kinds.
#include <string>
#include <utility>
#include <vector>

#include "catch.h"
#include "sched/loop.h"
#include "sched/strategies/strategies.h"
#include "util/errors.h"

namespace racelab::sched {
namespace {

StrategyParams params(StrategyKind kind) {
  StrategyParams p;
  p.kind = kind;
  return p;
}

using Given = std::vector<std::pair<std::string, std::uint64_t>>;

std::string refusal(StrategyKind kind, const Given& given) {
  StrategyParams p = params(kind);
  try {
    apply_strategy_options(p, given);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST_CASE("strategy table: capabilities answer per row, a bound given changes dpor's", "[dpor]") {
  CHECK(strategy_info(StrategyKind::kDpor).needs_footprints);
  CHECK(!strategy_info(StrategyKind::kPos).needs_footprints);
  CHECK(strategy_info(StrategyKind::kDpor).proves_every_order);
  CHECK(!strategy_info(StrategyKind::kDfs).proves_every_order);
  CHECK(std::string(live_prover().name) == "dpor");
  // A row says its search can be handed over exactly where its strategy can hand it over.
  for (const StrategyInfo& info : strategy_table())
    CHECK((make_strategy(params(info.kind))->resumable() != nullptr) == info.resumable);
  CHECK(strategy_info(StrategyKind::kDpor).resumable);

  StrategyParams dpor = params(StrategyKind::kDpor);
  CHECK(!bound_shrinks(dpor));
  CHECK(proof_brief(dpor, 12) == "proven (dpor, exhaustive, 12 executions)");
  CHECK(split_cost(dpor).rfind("and a split runs stateless", 0) == 0);
  dpor.explicit_bound = 1;
  CHECK(bound_shrinks(dpor));
  CHECK(proof_brief(dpor, 12).rfind("12 executions, exhaustive within max_preemptions=1", 0) == 0);
  CHECK(split_cost(dpor).empty());  // a bounded dpor keeps no cache to lose

  CHECK(bound_shrinks(params(StrategyKind::kDfs)));
  CHECK(!bound_shrinks(params(StrategyKind::kPct)));
  CHECK(proof_brief(params(StrategyKind::kStates), 3) ==
        "proven (states, exhaustive, 3 executions)");
  CHECK(split_cost(params(StrategyKind::kPct)).empty());

  // racelab replay's search: unbounded, with the state cache, whatever the scenario said.
  StrategyParams base = params(StrategyKind::kDpor);
  base.explicit_bound = 2;
  set_strategy_option(base, "--stateless");
  const StrategyParams cont = continuation_search(base, {0, 1});
  CHECK(cont.kind == StrategyKind::kDpor);
  CHECK(!cont.explicit_bound);
  CHECK(!split_cost(cont).empty());  // it keeps a state cache again
  CHECK(cont.prefix == std::vector<ThreadId>{0, 1});
  CHECK(make_strategy(cont)->describe().rfind("dpor(unbounded", 0) == 0);
}

TEST_CASE("strategy options: the chosen row owns them, its own check runs first", "[dpor]") {
  StrategyParams p = params(StrategyKind::kDpor);
  apply_strategy_options(p, Given{{"--stateless", 1}, {"--source-sets", 1}});
  CHECK(split_cost(p).empty());  // stateless: no cache for a split to lose
  CHECK(make_strategy(p)->describe().find("source sets") != std::string::npos);
  // Source sets miss classes on some programs (issue 35): their exhausted search proves nothing.
  CHECK(proves_every_order(params(StrategyKind::kDpor)));
  CHECK(!proves_every_order(p));
  CHECK(!proves_every_order(params(StrategyKind::kDfs)));
  CHECK(proof_brief(p, 12).rfind("12 executions, exhaustive (dpor, source sets; the search ended "
                                 "but proves nothing",
                                 0) == 0);
  CHECK(misses_classes(p));
  CHECK(!misses_classes(params(StrategyKind::kDpor)));
  CHECK(!misses_classes(params(StrategyKind::kPct)));  // a sampler never claimed every class
  SearchCover cover{.strategy = "dpor(unbounded, source sets)",
                    .executions = 12,
                    .cap = 100,
                    .stop = StopReason::kExhausted,
                    .proves = true,
                    .classes = Strategy::Classes{.classes = 12},
                    .misses_classes = true};
  CHECK(coverage_sentence(cover) ==
        "exhaustive, not a proof: the search ended, but it misses interleaving classes on some "
        "programs (dpor(unbounded, source sets)): 12 executions, 12 classes");
  cover.misses_classes = false;
  CHECK(coverage_sentence(cover).rfind("exhaustive: every interleaving class explored", 0) == 0);
  // Cut short, dpor still says what its executions were so far; a sampler has nothing to say.
  cover.stop = StopReason::kTimeLimit;
  cover.classes = Strategy::Classes{.classes = 10, .redundant = 2};
  CHECK(coverage_sentence(cover) ==
        "cut short by the time limit after 12 executions (dpor(unbounded, source sets), cap 100) "
        "before covering the space: not a proof (so far 10 classes, 2 redundant)");
  cover.states = 7;
  cover.classes->cached = 3;
  CHECK(coverage_sentence(cover).ends_with(
      "not a proof (so far 10 complete, 3 at a state explored before, 2 blocked)"));
  cover.classes.reset();
  cover.states.reset();
  CHECK(coverage_sentence(cover).ends_with("before covering the space: not a proof"));

  CHECK(refusal(StrategyKind::kPct, {{"--no-symmetry", 1}}) ==
        "--no-symmetry: only for --strategy dpor (this run's strategy is pct)");
  // Of several, the one ranked first: --stateless, --source-sets, --cache-after, --no-symmetry.
  CHECK(refusal(StrategyKind::kRandom, {{"--no-symmetry", 1}, {"--cache-after", 5}}) ==
        "--cache-after: only for --strategy dpor (this run's strategy is random)");
  CHECK(refusal(StrategyKind::kDfs, {{"--cache-after", 5}, {"--source-sets", 1}}) ==
        "--source-sets: only for --strategy dpor (this run's strategy is dfs)");
  // dpor's check of how its options combine comes before whose they are.
  CHECK(refusal(StrategyKind::kPct, {{"--stateless", 1}, {"--cache-after", 5}}) ==
        "--cache-after: not with --stateless (which keeps no state cache)");
  CHECK(refusal(StrategyKind::kDpor, {{"--cache-after", 0}}).empty());

  StrategyParams pct = params(StrategyKind::kPct);
  CHECK_THROWS_AS(set_strategy_option(pct, "--stateless"), std::invalid_argument);
}

}  // namespace
}  // namespace racelab::sched
