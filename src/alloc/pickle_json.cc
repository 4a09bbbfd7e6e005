// A pickle value tree and its JSON equivalent, both ways (racelab alloc convert, and snapshots
// given as JSON).
#include <fmt/format.h>

#include "alloc/pickle.h"
#include "util/errors.h"

namespace racelab::alloc {

nlohmann::ordered_json to_json(const PickleValue& v, const std::string& origin) {
  using J = nlohmann::ordered_json;
  switch (v.type) {
    case PickleType::kNone:
      return nullptr;
    case PickleType::kBool:
      return v.b;
    case PickleType::kInt:
      return v.i;
    case PickleType::kFloat:
      return v.f;
    case PickleType::kStr:
      return v.s;
    case PickleType::kBytes:
      throw InputError(fmt::format("{}: bytes values have no JSON equivalent", origin));
    case PickleType::kList:
    case PickleType::kTuple: {
      J a = J::array();
      for (const auto& it : v.items) a.push_back(to_json(*it, origin));
      return a;
    }
    case PickleType::kDict: {
      J o = J::object();
      for (const auto& [k, val] : v.dict) {
        if (k->type != PickleType::kStr) {
          throw InputError(fmt::format("{}: a dict key of type {} has no JSON equivalent", origin,
                                       type_name(k->type)));
        }
        o[k->s] = to_json(*val, origin);
      }
      return o;
    }
  }
  return nullptr;
}

namespace {

PickleRef from_json_at(const nlohmann::ordered_json& v, const std::string& origin, bool as_tuple,
                       int depth) {
  if (depth > kMaxPickleDepth)
    throw InputError(fmt::format("{}: nesting deeper than {}", origin, kMaxPickleDepth));
  switch (v.type()) {
    case nlohmann::json::value_t::null:
      return PickleValue::none();
    case nlohmann::json::value_t::boolean:
      return PickleValue::boolean(v.get<bool>());
    case nlohmann::json::value_t::number_integer:
      return PickleValue::integer(v.get<std::int64_t>());
    case nlohmann::json::value_t::number_unsigned: {
      const auto u = v.get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(INT64_MAX)) {
        throw InputError(fmt::format("{}: integer {} does not fit 64 bits", origin, u));
      }
      return PickleValue::integer(static_cast<std::int64_t>(u));
    }
    case nlohmann::json::value_t::number_float:
      return PickleValue::real(v.get<double>());
    case nlohmann::json::value_t::string:
      return PickleValue::str(v.get<std::string>());
    case nlohmann::json::value_t::array: {
      std::vector<PickleRef> items;
      for (const auto& it : v) items.push_back(from_json_at(it, origin, false, depth + 1));
      return as_tuple ? PickleValue::tuple(std::move(items)) : PickleValue::list(std::move(items));
    }
    case nlohmann::json::value_t::object: {
      auto d = PickleValue::new_dict();
      for (auto it = v.begin(); it != v.end(); ++it) {
        d->dict.emplace_back(
            PickleValue::str(it.key()),
            from_json_at(it.value(), origin, it.key() == "segment_pool_id", depth + 1));
      }
      return d;
    }
    default:
      throw InputError(fmt::format("{}: unsupported JSON value", origin));
  }
}

}  // namespace

PickleRef from_json(const nlohmann::ordered_json& value, const std::string& origin) {
  return from_json_at(value, origin, false, 0);
}

}  // namespace racelab::alloc
