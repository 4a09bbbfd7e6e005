#include "sched/subject_config.h"

#include <fmt/format.h>

#include "util/errors.h"

namespace racelab::sched {

namespace {

template <typename T>
std::optional<T> as(const SubjectConfig& c, std::string_view key, const char* kind) {
  const ConfigValue* v = c.find(key);
  if (v == nullptr) return std::nullopt;
  if (const T* t = std::get_if<T>(v)) return *t;
  throw InputError(fmt::format("{}: not {}", key, kind));
}

// An empty list was written as "[]": a list of either kind.
template <typename T, typename Other>
std::optional<std::vector<T>> list(const SubjectConfig& c, std::string_view key, const char* kind) {
  const ConfigValue* v = c.find(key);
  if (v == nullptr) return std::nullopt;
  if (const auto* t = std::get_if<std::vector<T>>(v)) return *t;
  if (const auto* o = std::get_if<std::vector<Other>>(v); o != nullptr && o->empty())
    return std::vector<T>{};
  throw InputError(fmt::format("{}: not {}", key, kind));
}

}  // namespace

const ConfigValue* SubjectConfig::find(std::string_view key) const {
  for (const auto& [k, v] : entries)
    if (k == key) return &v;
  return nullptr;
}

void SubjectConfig::set(std::string key, ConfigValue value) {
  for (auto& [k, v] : entries) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  entries.emplace_back(std::move(key), std::move(value));
}

std::optional<bool> SubjectConfig::boolean(std::string_view key) const {
  return as<bool>(*this, key, "true or false");
}
std::optional<std::int64_t> SubjectConfig::integer(std::string_view key) const {
  return as<std::int64_t>(*this, key, "an integer");
}
std::optional<std::string> SubjectConfig::text(std::string_view key) const {
  return as<std::string>(*this, key, "a string");
}
std::optional<std::vector<std::int64_t>> SubjectConfig::integers(std::string_view key) const {
  return list<std::int64_t, std::string>(*this, key, "a list of integers");
}
std::optional<std::vector<std::string>> SubjectConfig::texts(std::string_view key) const {
  return list<std::string, std::int64_t>(*this, key, "a list of strings");
}

template <typename T>
T required(std::optional<T> value, std::string_view key) {
  if (!value) throw InputError(fmt::format("{}: missing", key));
  return std::move(*value);
}
template bool required(std::optional<bool>, std::string_view);
template std::int64_t required(std::optional<std::int64_t>, std::string_view);
template std::string required(std::optional<std::string>, std::string_view);
template std::vector<std::int64_t> required(std::optional<std::vector<std::int64_t>>,
                                            std::string_view);
template std::vector<std::string> required(std::optional<std::vector<std::string>>,
                                           std::string_view);

}  // namespace racelab::sched
