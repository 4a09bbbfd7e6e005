// The one place where strategy names map to implementations and capabilities.
#include <array>
#include <stdexcept>
#include <string>

#include "sched/strategies/strategies.h"
#include "util/errors.h"

namespace racelab::sched {

namespace {

std::unique_ptr<Splitter> dfs_splitter(const StrategyParams& p) {
  return make_dfs_splitter(p.max_preemptions);
}
// dpor's symmetry reduction (StrategyParams::dpor_symmetry) is for one job: below a top part
// explored in full it multiplies the executions instead (1 GPU x 3 drafters: 4,496,874 on 2 jobs
// against 309,396 on one, and 961,228 without it), since whether two steps depend on each other
// through gating depends on their order. A split runs without it, so every split of a search
// agrees.
std::unique_ptr<Splitter> dpor_splitter(const StrategyParams& p) {
  return make_dpor_splitter(p.dpor_max_preemptions, /*symmetry=*/false, p.dpor_optimal);
}

// Order: help texts and errors list the names in it.
constexpr std::array<StrategyInfo, 7> kStrategies = {{
    // kind, name, proves, live, splitter, bounded, optional_bound, seeded
    {StrategyKind::kRandom, "random", false, true, nullptr, false, false, true},
    {StrategyKind::kPct, "pct", false, true, nullptr, false, false, true},
    {StrategyKind::kDfs, "dfs", true, true, dfs_splitter, true, false, false},
    {StrategyKind::kDpor, "dpor", true, true, dpor_splitter, false, true, false},
    {StrategyKind::kPos, "pos", false, true, nullptr, false, false, true},
    {StrategyKind::kSurw, "surw", false, true, nullptr, false, false, true},
    {StrategyKind::kStates, "states", true, false, nullptr, false, false, false},
}};

std::string joined(bool live_only) {
  std::string s;
  for (const StrategyInfo& info : kStrategies) {
    if (live_only && !info.live) continue;
    if (!s.empty()) s += " | ";
    s += info.name;
  }
  return s;
}

}  // namespace

std::span<const StrategyInfo> strategy_table() { return kStrategies; }

const char* strategy_name(StrategyKind kind) {
  for (const StrategyInfo& info : kStrategies) {
    if (info.kind == kind) return info.name;
  }
  return "?";
}

StrategyKind parse_strategy(const std::string& name) {
  for (const StrategyInfo& info : kStrategies) {
    if (name == info.name) return info.kind;
  }
  throw InputError("unknown strategy '" + name + "': expected " + strategy_names());
}

const char* strategy_names() {
  static const std::string names = joined(false);
  return names.c_str();
}

const char* live_strategy_names() {
  static const std::string names = joined(true);
  return names.c_str();
}

std::string seeded_strategy_names(bool live_only) {
  std::vector<std::string> names;
  for (const StrategyInfo& info : kStrategies) {
    if (info.seeded && (!live_only || info.live)) names.emplace_back(info.name);
  }
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return out;
}

std::vector<std::string> strategy_name_list(bool live_only) {
  std::vector<std::string> out;
  for (const StrategyInfo& info : kStrategies) {
    if (!live_only || info.live) out.emplace_back(info.name);
  }
  return out;
}

const StrategyInfo& strategy_info(StrategyKind kind) {
  for (const StrategyInfo& info : kStrategies) {
    if (info.kind == kind) return info;
  }
  return kStrategies.front();  // every kind is in the table (enum and table change together)
}

bool strategy_proves(StrategyKind kind) { return strategy_info(kind).proves; }

std::unique_ptr<Splitter> make_splitter(const StrategyParams& p) {
  if (!p.prefix.empty()) return nullptr;  // below a fixed prefix: one job
  const StrategyInfo& info = strategy_info(p.kind);
  return info.splitter != nullptr ? info.splitter(p) : nullptr;
}

std::unique_ptr<Strategy> make_strategy(const StrategyParams& p) {
  if (!p.prefix.empty() && p.kind != StrategyKind::kDpor)
    throw std::invalid_argument(std::string("a fixed prefix is for dpor, not ") +
                                strategy_name(p.kind));
  switch (p.kind) {
    case StrategyKind::kRandom:
      return make_random(p.seed);
    case StrategyKind::kPct:
      return make_pct(p.seed, p.depth);
    case StrategyKind::kDfs:
      return make_dfs(p.max_preemptions);
    case StrategyKind::kDpor:
      return make_dpor(p.dpor_max_preemptions, p.dpor_symmetry, p.dpor_states, p.dpor_optimal,
                       p.prefix, p.dpor_stateless_first);
    case StrategyKind::kPos:
      return make_pos(p.seed);
    case StrategyKind::kSurw:
      return make_surw(p.seed);
    case StrategyKind::kStates:
      return make_states();
  }
  return make_random(p.seed);
}

}  // namespace racelab::sched
