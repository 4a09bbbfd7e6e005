// The one place where strategy names map to implementations and capabilities.
#include "sched/strategies/strategies.h"
#include "util/errors.h"

namespace racelab::sched {

const char* strategy_name(StrategyKind kind) {
  switch (kind) {
    case StrategyKind::kRandom:
      return "random";
    case StrategyKind::kPct:
      return "pct";
    case StrategyKind::kDfs:
      return "dfs";
    case StrategyKind::kDpor:
      return "dpor";
  }
  return "?";
}

StrategyKind parse_strategy(const std::string& name) {
  if (name == "random") return StrategyKind::kRandom;
  if (name == "pct") return StrategyKind::kPct;
  if (name == "dfs") return StrategyKind::kDfs;
  if (name == "dpor") return StrategyKind::kDpor;
  throw InputError("unknown strategy '" + name + "': expected " + strategy_names());
}

const char* strategy_names() { return "random | pct | dfs | dpor"; }

bool strategy_proves(StrategyKind kind) {
  return kind == StrategyKind::kDfs || kind == StrategyKind::kDpor;
}

std::unique_ptr<Strategy> make_strategy(const StrategyParams& p) {
  switch (p.kind) {
    case StrategyKind::kRandom:
      return make_random(p.seed);
    case StrategyKind::kPct:
      return make_pct(p.seed, p.depth);
    case StrategyKind::kDfs:
      return make_dfs(p.max_preemptions);
    case StrategyKind::kDpor:
      return make_dpor(p.dpor_max_preemptions);
  }
  return make_random(p.seed);
}

}  // namespace racelab::sched
