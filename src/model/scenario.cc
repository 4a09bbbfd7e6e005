#include "model/scenario.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <regex>
#include <set>
#include <vector>

#include "model/profile.h"
#include "model/settings.h"
#include "sched/kinds.h"
#include "sched/strategies/strategies.h"
#include "util/errors.h"
#include "util/files.h"
#include "util/hash.h"

namespace racelab::model {

// The names are settings.h's, the table the live workload's names come from too; the enums list
// them in the same order.
static_assert(static_cast<std::size_t>(Attention::kSdpaFused) + 1 == settings::kAttentions.size());
static_assert(static_cast<std::size_t>(WarmupMode::kSeparateProcess) + 1 ==
              settings::kWarmupModes.size());

const char* attention_name(Attention a) {
  const auto i = static_cast<std::size_t>(a);
  return i < settings::kAttentions.size() ? settings::kAttentions[i].data() : "?";
}

const char* warmup_name(WarmupMode m) {
  const auto i = static_cast<std::size_t>(m);
  return i < settings::kWarmupModes.size() ? settings::kWarmupModes[i].data() : "?";
}

const std::vector<std::string>& known_finding_kinds() {
  // The registry's kinds a model run can report: the scheduler's checkers and the model's rules.
  static const std::vector<std::string> kinds =
      sched::kinds::names_found_by(sched::kinds::kByScheduler | sched::kinds::kByModel);
  return kinds;
}

namespace {

constexpr std::int64_t kMaxSeqLen = std::int64_t{1} << 24;
constexpr std::int64_t kMaxDim = std::int64_t{1} << 20;

// Reads one table, remembering which keys were consumed so that leftovers are reported.
class TableReader {
 public:
  TableReader(const toml::table& table, std::string prefix, const std::string& path)
      : table_(table), prefix_(std::move(prefix)), path_(path) {}

  [[noreturn]] void fail(std::string_view key, const std::string& problem) const {
    throw InputError(fmt::format("{}: {}{}: {}", path_, prefix_, key, problem));
  }

  const toml::node* get(std::string_view key) {
    seen_.insert(std::string(key));
    return table_.get(key);
  }

  std::string type_of(const toml::node& n) const {
    switch (n.type()) {
      case toml::node_type::string:
        return "a string";
      case toml::node_type::integer:
        return "an integer";
      case toml::node_type::floating_point:
        return "a float";
      case toml::node_type::boolean:
        return "a boolean";
      case toml::node_type::array:
        return "an array";
      case toml::node_type::table:
        return "a table";
      default:
        return "a date or time";
    }
  }

  void string(std::string_view key, std::string& out) {
    if (const toml::node* n = get(key)) {
      if (!n->is_string()) fail(key, "expected a string, got " + type_of(*n));
      out = n->as_string()->get();
    }
  }

  template <typename Int>
  void integer(std::string_view key, Int& out, std::int64_t lo, std::int64_t hi) {
    if (const toml::node* n = get(key)) out = static_cast<Int>(checked_int(key, *n, lo, hi));
  }

  std::int64_t checked_int(std::string_view key, const toml::node& n, std::int64_t lo,
                           std::int64_t hi) const {
    if (!n.is_integer())
      fail(key, fmt::format("expected an integer in {}..{}, got {}", lo, hi, type_of(n)));
    const std::int64_t v = n.as_integer()->get();
    if (v < lo || v > hi)
      fail(key, fmt::format("expected an integer in {}..{}, got {}", lo, hi, v));
    return v;
  }

  void boolean(std::string_view key, bool& out) {
    if (const toml::node* n = get(key)) {
      if (!n->is_boolean()) fail(key, "expected true or false, got " + type_of(*n));
      out = n->as_boolean()->get();
    }
  }

  void number(std::string_view key, double& out, double lo, double hi) {
    if (const toml::node* n = get(key)) {
      double v = 0;
      if (n->is_integer()) {
        v = static_cast<double>(n->as_integer()->get());
      } else if (n->is_floating_point()) {
        v = n->as_floating_point()->get();
      } else {
        fail(key, "expected a number, got " + type_of(*n));
      }
      if (!(v > lo && v <= hi))
        fail(key, fmt::format("expected a number in ({}, {}], got {}", lo, hi, v));
      out = v;
    }
  }

  template <typename E>
  void choice(std::string_view key, E& out, const std::vector<std::pair<std::string, E>>& options) {
    std::string text;
    string(key, text);
    if (text.empty() && get(key) == nullptr) return;
    std::string names;
    for (const auto& [name, value] : options) {
      if (text == name) {
        out = value;
        return;
      }
      names += (names.empty() ? "" : " | ") + name;
    }
    fail(key, fmt::format("unknown value \"{}\": expected {}", text, names));
  }

  void strings(std::string_view key, std::vector<std::string>& out) {
    const toml::node* n = get(key);
    if (n == nullptr) return;
    if (!n->is_array()) fail(key, "expected an array of strings, got " + type_of(*n));
    out.clear();
    for (const toml::node& item : *n->as_array()) {
      if (!item.is_string())
        fail(key, "expected an array of strings, got an element that is " + type_of(item));
      out.push_back(item.as_string()->get());
    }
  }

  void kinds(std::string_view key, std::vector<std::string>& out,
             const std::vector<std::string>& known) {
    const toml::node* n = get(key);
    if (n == nullptr) return;
    if (!n->is_array()) fail(key, "expected an array of finding kinds, got " + type_of(*n));
    std::string names;
    for (const auto& k : known) names += (names.empty() ? "" : ", ") + k;
    for (const toml::node& item : *n->as_array()) {
      if (!item.is_string())
        fail(key, "expected an array of strings, got an element that is " + type_of(item));
      const std::string kind = item.as_string()->get();
      if (std::find(known.begin(), known.end(), kind) == known.end()) {
        fail(key, fmt::format("unknown finding kind \"{}\": expected one of {}", kind, names));
      }
      if (std::find(out.begin(), out.end(), kind) != out.end()) {
        fail(key, fmt::format("\"{}\" is listed twice", kind));
      }
      out.push_back(kind);
    }
  }

  // Every key in the table must have been read.
  void finish() const {
    for (const auto& [key, node] : table_) {
      if (!seen_.count(std::string(key.str()))) fail(key.str(), "unknown key");
    }
  }

 private:
  const toml::table& table_;
  std::string prefix_;
  const std::string& path_;
  std::set<std::string> seen_;
};

// An enum's choices from its names in settings.h (the enum lists them in the same order).
template <typename E, std::size_t N>
std::vector<std::pair<std::string, E>> named(const std::array<std::string_view, N>& names) {
  std::vector<std::pair<std::string, E>> out;
  for (std::size_t i = 0; i < N; ++i) out.emplace_back(std::string(names[i]), static_cast<E>(i));
  return out;
}

const toml::table* subtable(TableReader& top, std::string_view key) {
  const toml::node* n = top.get(key);
  if (n == nullptr) return nullptr;
  if (!n->is_table())
    top.fail(key, "expected a table ([" + std::string(key) + "]), got " + top.type_of(*n));
  return n->as_table();
}

}  // namespace

Scenario parse_scenario(std::string_view text, const std::string& path) {
  toml::table doc;
  try {
    doc = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    throw InputError(fmt::format("{}: line {}, column {}: {}", path, e.source().begin.line,
                                 e.source().begin.column, e.description()));
  }
  Scenario s;
  s.path = path;
  s.content = std::string(text);
  s.hash = hex64(fnv1a64(text));

  TableReader top(doc, "", path);
  if (top.get("name") == nullptr) top.fail("name", "missing (required)");
  top.string("name", s.name);
  static const std::regex name_re("[a-z0-9-]+");
  if (!std::regex_match(s.name, name_re)) {
    top.fail("name", fmt::format("\"{}\" must match [a-z0-9-]+", s.name));
  }
  top.string("description", s.description);

  if (const toml::table* t = subtable(top, "pipeline")) {
    TableReader r(*t, "pipeline.", path);
    r.integer("devices", s.devices, 1, 64);
    r.integer("drafters_per_device", s.drafters_per_device, 1, 64);
    r.integer("steps", s.steps, 1, 100000);
    r.choice("attention", s.attention, named<Attention>(settings::kAttentions));
    if (const toml::node* n = r.get("seq_len")) {
      s.seq_len.clear();
      if (n->is_array()) {
        const toml::array& a = *n->as_array();
        if (a.empty())
          r.fail("seq_len",
                 "expected an integer or a non-empty array of integers, got an empty array");
        for (const toml::node& item : a)
          s.seq_len.push_back(r.checked_int("seq_len", item, 1, kMaxSeqLen));
      } else {
        s.seq_len.push_back(r.checked_int("seq_len", *n, 1, kMaxSeqLen));
      }
    }
    r.integer("batch", s.batch, 1, kMaxDim);
    r.integer("heads", s.heads, 1, kMaxDim);
    r.integer("head_dim", s.head_dim, 1, kMaxDim);
    r.integer("chunk", s.chunk, 1, kMaxSeqLen);
    r.finish();
  }
  if (const toml::table* t = subtable(top, "warmup")) {
    TableReader r(*t, "warmup.", path);
    r.choice("mode", s.warmup, named<WarmupMode>(settings::kWarmupModes));
    r.boolean("backward", s.warmup_backward);
    r.integer("seq_len", s.warmup_seq_len, 1, kMaxSeqLen);
    r.finish();
  }
  if (const toml::table* t = subtable(top, "torch")) {
    TableReader r(*t, "torch.", path);
    r.string("profile", s.profile);
    if (find_torch_profile(s.profile) == nullptr)
      r.fail("profile", fmt::format("unknown torch version \"{}\": the profiles cover {}",
                                    s.profile, torch_profiles_summary()));
    r.integer("recompile_limit", s.recompile_limit, 1, 256);
    r.boolean("automatic_dynamic", s.automatic_dynamic);
    r.finish();
  }
  if (const toml::table* t = subtable(top, "gpu")) {
    TableReader r(*t, "gpu.", path);
    r.number("memory_gib", s.memory_gib, 0, 1 << 20);
    r.finish();
  }
  if (const toml::table* t = subtable(top, "explore")) {
    TableReader r(*t, "explore.", path);
    r.choice("strategy", s.explore.kind, sched::strategy_choices());
    r.integer("iterations", s.iterations, 1, std::int64_t{1} << 40);
    r.integer("depth", s.explore.depth, 1, 64);
    r.integer("max_preemptions", s.explore.max_preemptions, 0, 64);
    // dpor is unbounded unless a dpor scenario bounds it explicitly (a dfs scenario's bound is
    // dfs's: `--strategy dpor` on it still covers every class).
    if (t->contains("max_preemptions") && sched::strategy_info(s.explore.kind).optional_bound)
      s.explore.explicit_bound = s.explore.max_preemptions;
    r.integer("seed", s.explore.seed, 0, std::numeric_limits<std::int64_t>::max());
    r.finish();
  }
  if (const toml::table* t = subtable(top, "live")) {
    for (const char* model_table : {"pipeline", "warmup", "torch", "gpu", "explore"}) {
      if (doc.contains(model_table))
        top.fail(model_table, "a scenario with [live] runs a real program; it has no [" +
                                  std::string(model_table) + "]");
    }
    TableReader r(*t, "live.", path);
    LiveCase live;
    if (r.get("script") == nullptr) r.fail("script", "missing (required)");
    r.string("script", live.script);
    r.strings("args", live.args);
    r.string("interpose", live.interpose);
    r.strings("python_path", live.python_path);
    r.strings("dicts", live.dicts);
    r.strings("locks", live.locks);
    r.strings("points", live.points);
    r.strings("blocking", live.blocking);
    r.choice("strategy", live.strategy,
             sched::strategy_choices([](const sched::StrategyInfo& info) { return info.live; }));
    r.integer("max_preemptions", live.max_preemptions, 0, 64);
    r.integer("seed", live.seed, 0, std::numeric_limits<std::int64_t>::max());
    r.integer("executions", live.executions, 1, 100000);
    r.number("hang_timeout", live.hang_timeout, 0, 86400);
    r.boolean("requires_cuda", live.requires_cuda);
    std::vector<std::pair<std::string, std::optional<results::MemoryExpect>>> memory_names;
    for (const auto& [word, m] : results::memory_expect_table()) memory_names.emplace_back(word, m);
    r.choice("alloc", live.alloc, memory_names);
    r.integer("alloc_settle", live.alloc_settle, 0, 1000000);
    r.number("alloc_time_limit", live.alloc_time_limit, 1, 86400);
    r.finish();
    s.live = std::move(live);
  }
  if (const toml::table* t = subtable(top, "expect")) {
    TableReader r(*t, "expect.", path);
    // A live case can also meet what only live runs find (a hang, racelab losing control, a
    // crash of the process).
    static const std::vector<std::string> live_kinds = sched::kinds::names_found_by(
        sched::kinds::kByScheduler | sched::kinds::kByModel | sched::kinds::kByLive);
    const auto& known = s.live ? live_kinds : known_finding_kinds();
    r.kinds("must", s.must, known);
    r.kinds("must_not", s.must_not, known);
    for (const auto& k : s.must) {
      if (std::find(s.must_not.begin(), s.must_not.end(), k) != s.must_not.end()) {
        r.fail("must_not", fmt::format("\"{}\" is also in expect.must", k));
      }
    }
    r.finish();
  }
  top.finish();
  return s;
}

Scenario load_scenario(const std::string& path) { return parse_scenario(read_file(path), path); }

std::string torch_hash(const std::string& content, const std::string& profile) {
  return hex64(fnv1a64(content + "\n# racelab --torch " + profile + "\n"));
}

void apply_torch(Scenario& s, const std::string& version) {
  if (find_torch_profile(version) == nullptr) {
    throw InputError(fmt::format("--torch: unknown torch version \"{}\": the profiles cover {}",
                                 version, torch_profiles_summary()));
  }
  if (s.live) {
    throw InputError(
        fmt::format("{}: --torch applies to model scenarios; a [live] case runs the "
                    "torch its interpreter imports",
                    s.path));
  }
  s.profile = version;
  s.torch_override = version;
  s.hash = torch_hash(s.content, torch_profile(version).name);
}

}  // namespace racelab::model
