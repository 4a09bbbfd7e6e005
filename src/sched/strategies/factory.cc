// The one place where strategy names map to implementations.
#include "sched/strategies/strategies.h"
#include "util/errors.h"

namespace racelab::sched {

StrategyKind parse_strategy(const std::string& name) {
  if (name == "random") return StrategyKind::kRandom;
  if (name == "pct") return StrategyKind::kPct;
  if (name == "dfs") return StrategyKind::kDfs;
  throw InputError("unknown strategy '" + name + "': expected random, pct or dfs");
}

std::unique_ptr<Strategy> make_strategy(const StrategyParams& p) {
  switch (p.kind) {
    case StrategyKind::kRandom:
      return make_random(p.seed);
    case StrategyKind::kPct:
      return make_pct(p.seed, p.depth);
    case StrategyKind::kDfs:
      return make_dfs(p.max_preemptions);
  }
  return make_random(p.seed);
}

}  // namespace racelab::sched
