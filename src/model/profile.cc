#include "model/profile.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include <set>
#include <stdexcept>

#include "racelab/profiles_embedded.h"
#include "util/errors.h"

namespace racelab::model {

namespace {

// Strict reading of one table: every key required, unknown keys refused.
class ProfileTable {
 public:
  ProfileTable(const toml::table& table, std::string prefix, const std::string& file)
      : table_(table), prefix_(std::move(prefix)), file_(file) {}

  [[noreturn]] void fail(std::string_view key, const std::string& problem) const {
    throw InputError(fmt::format("{}: {}{}: {}", file_, prefix_, key, problem));
  }

  const toml::node& need(std::string_view key) {
    seen_.insert(std::string(key));
    const toml::node* n = table_.get(key);
    if (n == nullptr) fail(key, "missing (every key of a profile is required)");
    return *n;
  }

  std::string string(std::string_view key) {
    const toml::node& n = need(key);
    if (!n.is_string()) fail(key, "expected a string");
    return n.as_string()->get();
  }

  bool boolean(std::string_view key) {
    const toml::node& n = need(key);
    if (!n.is_boolean()) fail(key, "expected true or false");
    return n.as_boolean()->get();
  }

  double seconds(std::string_view key) {
    const toml::node& n = need(key);
    double v = 0;
    if (n.is_floating_point()) {
      v = n.as_floating_point()->get();
    } else if (n.is_integer()) {
      v = static_cast<double>(n.as_integer()->get());
    } else {
      fail(key, "expected a number");
    }
    if (!(v >= 0 && v <= 1e6)) fail(key, fmt::format("expected a number in 0..1e6, got {}", v));
    return v;
  }

  std::vector<std::string> strings(std::string_view key) {
    const toml::node& n = need(key);
    const toml::array* a = n.as_array();
    if (a == nullptr || a->empty()) fail(key, "expected a non-empty array of strings");
    std::vector<std::string> out;
    for (const toml::node& e : *a) {
      if (!e.is_string()) fail(key, "expected a non-empty array of strings");
      out.push_back(e.as_string()->get());
    }
    return out;
  }

  const toml::table& table(std::string_view key) {
    const toml::node& n = need(key);
    if (!n.is_table()) fail(key, "expected a table");
    return *n.as_table();
  }

  void finish() const {
    for (const auto& [k, v] : table_) {
      if (!seen_.contains(std::string(k.str()))) fail(k.str(), "unknown key");
    }
  }

 private:
  const toml::table& table_;
  std::string prefix_;
  const std::string& file_;
  std::set<std::string> seen_;
};

// "2.14.1+cu130" -> "2.14"; a version with fewer than two parts stays as it is.
std::string series_of(const std::string& version) {
  std::string v = version.substr(0, version.find('+'));
  const auto first = v.find('.');
  if (first == std::string::npos) return v;
  const auto second = v.find('.', first + 1);
  return second == std::string::npos ? v : v.substr(0, second);
}

bool is_series(const std::string& s) {
  const auto dot = s.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == s.size()) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i != dot && (s[i] < '0' || s[i] > '9')) return false;
  }
  return true;
}

}  // namespace

TorchProfile parse_torch_profile(const std::string& text, const std::string& file) {
  toml::table top;
  try {
    top = toml::parse(text, file);
  } catch (const toml::parse_error& e) {
    throw InputError(fmt::format("{}:{}: {}", file, e.source().begin.line, e.description()));
  }
  TorchProfile p;
  p.file = file;
  ProfileTable t(top, "", file);
  p.name = t.string("name");
  if (!is_series(p.name)) t.fail("name", "expected a release series such as \"2.14\"");
  p.versions = t.strings("versions");
  for (const std::string& v : p.versions) {
    if (!is_series(v)) t.fail("versions", fmt::format("\"{}\" is not a release series", v));
  }
  p.description = t.string("description");
  ProfileTable facts(t.table("facts"), "facts.", file);
  p.cudagraph_tls_assert = facts.boolean("cudagraph_tls_assert");
  p.fx_tracing_process_wide = facts.boolean("fx_tracing_process_wide");
  p.dynamic_backward_ahead_of_time = facts.boolean("dynamic_backward_ahead_of_time");
  p.eager_flex_traces = facts.boolean("eager_flex_traces");
  facts.finish();
  ProfileTable d(t.table("durations"), "durations.", file);
  p.compile_forward = d.seconds("compile_forward");
  p.compile_backward = d.seconds("compile_backward");
  p.trace_grad = d.seconds("trace_grad");
  p.forward = d.seconds("forward");
  p.backward = d.seconds("backward");
  p.eager_forward = d.seconds("eager_forward");
  p.warm_disk_factor = d.seconds("warm_disk_factor");
  d.finish();
  t.finish();
  return p;
}

const std::vector<TorchProfile>& torch_profiles() {
  static const std::vector<TorchProfile> profiles = [] {
    std::vector<TorchProfile> out;
    std::set<std::string> series;
    for (const auto& [file, text] : kEmbeddedProfiles) {
      try {
        out.push_back(parse_torch_profile(std::string(text), std::string(file)));
      } catch (const InputError& e) {
        throw std::logic_error(std::string("embedded torch profile: ") + e.what());
      }
      for (const std::string& v : out.back().versions) {
        if (!series.insert(v).second)
          throw std::logic_error(
              fmt::format("embedded torch profile {}: {} is in two profiles", file, v));
      }
    }
    return out;
  }();
  return profiles;
}

const TorchProfile* find_torch_profile(const std::string& version) {
  for (const TorchProfile& p : torch_profiles()) {
    if (p.name == version) return &p;
  }
  const std::string series = series_of(version);
  for (const TorchProfile& p : torch_profiles()) {
    for (const std::string& v : p.versions) {
      if (v == series) return &p;
    }
  }
  return nullptr;
}

std::string torch_profiles_summary() {
  std::vector<std::string> parts;
  for (const TorchProfile& p : torch_profiles()) {
    const std::string range =
        p.versions.size() == 1 ? p.versions.front() : p.versions.front() + "-" + p.versions.back();
    parts.push_back(fmt::format("{} (profile {})", range, p.name));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

const TorchProfile& torch_profile(const std::string& version) {
  if (const TorchProfile* p = find_torch_profile(version)) return *p;
  throw InputError(fmt::format("unknown torch version \"{}\": the profiles cover {}", version,
                               torch_profiles_summary()));
}

}  // namespace racelab::model
