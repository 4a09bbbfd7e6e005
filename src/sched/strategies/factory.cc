// The one place where strategy names map to implementations and capabilities.
#include <fmt/format.h>

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

bool dfs_bound_shrinks(const StrategyParams&) { return true; }
bool dpor_bound_shrinks(const StrategyParams& p) { return p.dpor_max_preemptions.has_value(); }

std::string dfs_proof_brief(const StrategyParams& p, std::uint64_t n) {
  return fmt::format("proven within the bound (dfs, max_preemptions={}, exhaustive, {} executions)",
                     p.max_preemptions, n);
}
// A bounded dpor is a heuristic: exhaustive within its bound, not a proof.
std::string dpor_proof_brief(const StrategyParams& p, std::uint64_t n) {
  if (p.dpor_max_preemptions) {
    return fmt::format(
        "{} executions, exhaustive within max_preemptions={} (dpor; a bounded dpor is a "
        "heuristic, not a proof)",
        n, *p.dpor_max_preemptions);
  }
  return fmt::format("proven (dpor, exhaustive, {} executions)", n);
}
std::string states_proof_brief(const StrategyParams&, std::uint64_t n) {
  return fmt::format("proven (states, exhaustive, {} executions)", n);
}

// Only an unbounded dpor that keeps its state cache loses something when split (dpor_splitter).
std::string dpor_split_cost(const StrategyParams& p) {
  if (!p.dpor_states || p.dpor_max_preemptions) return "";
  return "and a split runs stateless: the state cache belongs to one job (the same kinds and "
         "verdict, more executions; without --jobs and --shard dpor keeps its cache, which alone "
         "finishes the largest scenarios; docs/concepts.md, State cache)";
}

// Order: help texts and errors list the names in it.
constexpr std::array<StrategyInfo, 7> kStrategies = {{
    {.kind = StrategyKind::kRandom,
     .name = "random",
     .proves = false,
     .live = true,
     .splitter = nullptr,
     .bounded = false,
     .optional_bound = false,
     .seeded = true},
    {.kind = StrategyKind::kPct,
     .name = "pct",
     .proves = false,
     .live = true,
     .splitter = nullptr,
     .bounded = false,
     .optional_bound = false,
     .seeded = true},
    {.kind = StrategyKind::kDfs,
     .name = "dfs",
     .proves = true,
     .live = true,
     .splitter = dfs_splitter,
     .bounded = true,
     .optional_bound = false,
     .seeded = false,
     .bound_shrinks = dfs_bound_shrinks,
     .proof_brief = dfs_proof_brief},
    {.kind = StrategyKind::kDpor,
     .name = "dpor",
     .proves = true,
     .live = true,
     .splitter = dpor_splitter,
     .bounded = false,
     .optional_bound = true,
     .seeded = false,
     .needs_footprints = true,
     .proves_every_order = true,
     .bound_shrinks = dpor_bound_shrinks,
     .proof_brief = dpor_proof_brief,
     .split_cost = dpor_split_cost},
    {.kind = StrategyKind::kPos,
     .name = "pos",
     .proves = false,
     .live = true,
     .splitter = nullptr,
     .bounded = false,
     .optional_bound = false,
     .seeded = true},
    {.kind = StrategyKind::kSurw,
     .name = "surw",
     .proves = false,
     .live = true,
     .splitter = nullptr,
     .bounded = false,
     .optional_bound = false,
     .seeded = true},
    {.kind = StrategyKind::kStates,
     .name = "states",
     .proves = true,
     .live = false,
     .splitter = nullptr,
     .bounded = false,
     .optional_bound = false,
     .seeded = false,
     .proves_every_order = true,
     .proof_brief = states_proof_brief},
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

bool bound_shrinks(const StrategyParams& p) {
  const StrategyInfo& info = strategy_info(p.kind);
  return info.bound_shrinks != nullptr && info.bound_shrinks(p);
}

std::string proof_brief(const StrategyParams& p, std::uint64_t n) {
  const StrategyInfo& info = strategy_info(p.kind);
  return info.proof_brief != nullptr ? info.proof_brief(p, n)
                                     : fmt::format("{} executions, exhaustive", n);
}

std::string split_cost(const StrategyParams& p) {
  const StrategyInfo& info = strategy_info(p.kind);
  return info.split_cost != nullptr ? info.split_cost(p) : "";
}

const StrategyInfo& live_prover() {
  static const StrategyInfo& prover = []() -> const StrategyInfo& {
    for (const StrategyInfo& info : kStrategies) {
      if (info.live && info.proves && !info.bounded) return info;
    }
    throw std::logic_error("no live strategy proves every order");
  }();
  return prover;
}

StrategyParams continuation_search(StrategyParams p, std::vector<ThreadId> prefix) {
  p.kind = StrategyKind::kDpor;
  p.dpor_max_preemptions.reset();  // a bound would make it a heuristic, not a proof
  p.dpor_states = true;
  p.dpor_optimal = true;
  p.prefix = std::move(prefix);
  return p;
}

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
