#pragma once
// A live subject's configuration (its job: the LibTorch workload's shape, a Python script and its
// table entries), as its schedule's `strategy.parameters` and its report's `parameters` record it:
// named values in the order the subject gives them. No JSON here: src/report/schedule_file.h maps
// it to and from JSON, in one place; each subject maps its own job to and from it
// (live/torch to_config, live/python job_config).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace racelab::sched {

// A value's kinds: what the live subjects' jobs hold. An empty list is read as either list.
using ConfigValue = std::variant<bool, std::int64_t, std::string, std::vector<std::int64_t>,
                                 std::vector<std::string>>;

struct SubjectConfig {
  std::vector<std::pair<std::string, ConfigValue>> entries;  // in the subject's order

  bool empty() const { return entries.empty(); }
  const ConfigValue* find(std::string_view key) const;
  // Appends `key`; a key set again keeps its place and takes the new value.
  void set(std::string key, ConfigValue value);

  // The value of `key`: nullopt where absent; InputError "<key>: not <a kind>" where it is of
  // another kind.
  std::optional<bool> boolean(std::string_view key) const;
  std::optional<std::int64_t> integer(std::string_view key) const;
  std::optional<std::string> text(std::string_view key) const;
  std::optional<std::vector<std::int64_t>> integers(std::string_view key) const;
  std::optional<std::vector<std::string>> texts(std::string_view key) const;

  bool operator==(const SubjectConfig&) const = default;
};

// `value`, or InputError "<key>: missing" (a subject's required entry).
template <typename T>
T required(std::optional<T> value, std::string_view key);

}  // namespace racelab::sched
