// The one place where strategy names map to implementations and capabilities.
#include <fmt/format.h>

#include <array>
#include <stdexcept>
#include <string>

#include "sched/strategies/strategies.h"
#include "util/errors.h"

namespace racelab::sched {

namespace {

// dpor's own options, in --help order (their index is their place in StrategyParams::own).
enum DporOption : std::size_t { kNoSymmetry, kStateless, kSourceSets, kCacheAfter };
constexpr std::array<StrategyOption, 4> kDporOptions = {{
    {.flag = "--no-symmetry",
     .help = "dpor with --stateless: explore alike drafters separately (docs/concepts.md, "
             "symmetry; the state cache renames them regardless)",
     .number = false,
     .refusal_rank = 3},
    {.flag = "--stateless",
     .help = "dpor: keep no cache of explored states, one execution per interleaving class "
             "(docs/concepts.md, State cache)",
     .number = false,
     .refusal_rank = 0},
    {.flag = "--source-sets",
     .help = "dpor: source sets instead of wakeup trees (the search before optimal dpor, for "
             "comparison; docs/concepts.md, Optimal dpor)",
     .number = false,
     .refusal_rank = 1},
    {.flag = "--cache-after",
     .help = "dpor: run this many executions stateless before the state cache, which starts "
             "only if they did not finish (default 1000; 0: the cache from the start; "
             "docs/concepts.md, State cache)",
     .number = true,
     .refusal_rank = 2},
}};
static_assert(kDporOptions.size() <= kMaxOwnOptions);

// What dpor's options say, with their defaults: symmetry, the state cache and wakeup trees on.
struct DporSettings {
  bool symmetry, states, optimal;
  std::uint64_t stateless_first;
};
DporSettings dpor_settings(const StrategyParams& p) {
  return {.symmetry = !p.own[kNoSymmetry],
          .states = !p.own[kStateless],
          .optimal = !p.own[kSourceSets],
          .stateless_first = p.own[kCacheAfter].value_or(kDporStatelessFirst)};
}

void check_dpor_options(const OwnOptions& own) {
  if (own[kStateless] && own[kCacheAfter])
    throw InputError("--cache-after: not with --stateless (which keeps no state cache)");
}

std::unique_ptr<Splitter> dfs_splitter(const StrategyParams& p) {
  return make_dfs_splitter(p.max_preemptions);
}
// dpor's symmetry reduction (on unless --no-symmetry) is for one job: below a top part
// explored in full it multiplies the executions instead (1 GPU x 3 drafters: 4,496,874 on 2 jobs
// against 309,396 on one, and 961,228 without it), since whether two steps depend on each other
// through gating depends on their order. A split runs without it, so every split of a search
// agrees.
std::unique_ptr<Splitter> dpor_splitter(const StrategyParams& p) {
  return make_dpor_splitter(p.explicit_bound, /*symmetry=*/false, dpor_settings(p).optimal);
}

bool dfs_bound_shrinks(const StrategyParams&) { return true; }
bool dpor_bound_shrinks(const StrategyParams& p) { return p.explicit_bound.has_value(); }

std::string dfs_proof_brief(const StrategyParams& p, std::uint64_t n) {
  return fmt::format("proven within the bound (dfs, max_preemptions={}, exhaustive, {} executions)",
                     p.max_preemptions, n);
}
// A bounded dpor is a heuristic: exhaustive within its bound, not a proof.
std::string dpor_proof_brief(const StrategyParams& p, std::uint64_t n) {
  if (p.explicit_bound) {
    return fmt::format(
        "{} executions, exhaustive within max_preemptions={} (dpor; a bounded dpor is a "
        "heuristic, not a proof)",
        n, *p.explicit_bound);
  }
  // Source sets miss interleaving classes on some programs (issue 35, test_sched "[.hunt]"):
  // its finished search is a count, not a proof.
  if (!dpor_settings(p).optimal) {
    return fmt::format(
        "{} executions, exhaustive (dpor, source sets; the search ended but proves nothing: it "
        "misses interleaving classes on some programs)",
        n);
  }
  return fmt::format("proven (dpor, exhaustive, {} executions)", n);
}
std::string states_proof_brief(const StrategyParams&, std::uint64_t n) {
  return fmt::format("proven (states, exhaustive, {} executions)", n);
}

// Only an unbounded dpor that keeps its state cache loses something when split (dpor_splitter).
std::string dpor_split_cost(const StrategyParams& p) {
  if (!dpor_settings(p).states || p.explicit_bound) return "";
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
     .resumable = true,
     .bound_shrinks = dpor_bound_shrinks,
     .proof_brief = dpor_proof_brief,
     .split_cost = dpor_split_cost,
     .options = kDporOptions,
     .check_options = check_dpor_options},
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

std::vector<std::pair<std::string, StrategyKind>> strategy_choices(
    bool (*keep)(const StrategyInfo& info)) {
  std::vector<std::pair<std::string, StrategyKind>> out;
  for (const StrategyInfo& info : kStrategies) {
    if (keep == nullptr || keep(info)) out.emplace_back(info.name, info.kind);
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

bool proves_every_order(const StrategyParams& p) {
  if (!strategy_info(p.kind).proves_every_order) return false;
  return p.kind != StrategyKind::kDpor || dpor_settings(p).optimal;  // source sets miss classes
}

bool misses_classes(const StrategyParams& p) {
  return strategy_info(p.kind).proves_every_order && !proves_every_order(p);
}

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

namespace {

// The row that owns `flag`, and the option's index in it; nullptr where none does.
std::pair<const StrategyInfo*, std::size_t> option_owner(std::string_view flag) {
  for (const StrategyInfo& info : kStrategies) {
    for (std::size_t i = 0; i < info.options.size(); ++i) {
      if (flag == info.options[i].flag) return {&info, i};
    }
  }
  return {nullptr, 0};
}

}  // namespace

void set_strategy_option(StrategyParams& p, std::string_view flag, std::uint64_t value) {
  const auto [owner, index] = option_owner(flag);
  if (owner == nullptr || owner->kind != p.kind)
    throw std::invalid_argument(
        fmt::format("{}: not an option of {}", flag, strategy_name(p.kind)));
  p.own[index] = value;
}

void apply_strategy_options(StrategyParams& p,
                            std::span<const std::pair<std::string, std::uint64_t>> given) {
  // How they combine, checked by each row that owns some of them.
  for (const StrategyInfo& info : kStrategies) {
    if (info.check_options == nullptr) continue;
    OwnOptions own{};
    bool any = false;
    for (const auto& [flag, value] : given) {
      const auto [owner, index] = option_owner(flag);
      if (owner == &info) {
        own[index] = value;
        any = true;
      }
    }
    if (any) info.check_options(own);
  }
  // Then whether the chosen strategy owns them.
  const StrategyOption* refused = nullptr;
  const StrategyInfo* refused_owner = nullptr;
  for (const auto& [flag, value] : given) {
    const auto [owner, index] = option_owner(flag);
    if (owner == nullptr) throw std::invalid_argument(flag + ": no strategy owns it");
    if (owner->kind == p.kind) continue;
    const StrategyOption& o = owner->options[index];
    if (refused == nullptr || o.refusal_rank < refused->refusal_rank) {
      refused = &o;
      refused_owner = owner;
    }
  }
  if (refused != nullptr) {
    throw InputError(fmt::format("{}: only for --strategy {} (this run's strategy is {})",
                                 refused->flag, refused_owner->name, strategy_name(p.kind)));
  }
  for (const auto& [flag, value] : given) set_strategy_option(p, flag, value);
}

StrategyParams continuation_search(StrategyParams p, std::vector<ThreadId> prefix) {
  p.kind = StrategyKind::kDpor;
  p.explicit_bound.reset();   // a bound would make it a heuristic, not a proof
  p.own[kStateless].reset();  // the state cache and wakeup trees
  p.own[kSourceSets].reset();
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
    case StrategyKind::kDpor: {
      const DporSettings s = dpor_settings(p);
      return make_dpor(p.explicit_bound, s.symmetry, s.states, s.optimal, p.prefix,
                       s.stateless_first);
    }
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
