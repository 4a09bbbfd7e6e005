// The pickle value tree: PickleValue's constructors, dict access and Python's type names. Reading
// is pickle_reader.cc, writing pickle_writer.cc, the JSON equivalent pickle_json.cc.
#include "alloc/pickle.h"

namespace racelab::alloc {

namespace {

PickleRef make(PickleType t) {
  auto p = std::make_shared<PickleValue>();
  p->type = t;
  return p;
}

}  // namespace

PickleRef PickleValue::none() { return make(PickleType::kNone); }
PickleRef PickleValue::boolean(bool v) {
  auto p = make(PickleType::kBool);
  p->b = v;
  return p;
}
PickleRef PickleValue::integer(std::int64_t v) {
  auto p = make(PickleType::kInt);
  p->i = v;
  return p;
}
PickleRef PickleValue::real(double v) {
  auto p = make(PickleType::kFloat);
  p->f = v;
  return p;
}
PickleRef PickleValue::str(std::string v) {
  auto p = make(PickleType::kStr);
  p->s = std::move(v);
  return p;
}
PickleRef PickleValue::list(std::vector<PickleRef> v) {
  auto p = make(PickleType::kList);
  p->items = std::move(v);
  return p;
}
PickleRef PickleValue::tuple(std::vector<PickleRef> v) {
  auto p = make(PickleType::kTuple);
  p->items = std::move(v);
  return p;
}
PickleRef PickleValue::bytes(std::string v) {
  auto p = make(PickleType::kBytes);
  p->s = std::move(v);
  return p;
}
PickleRef PickleValue::new_dict() { return make(PickleType::kDict); }

const PickleValue* PickleValue::get(std::string_view key) const {
  if (type != PickleType::kDict) return nullptr;
  for (const auto& [k, v] : dict) {
    if (k->type == PickleType::kStr && k->s == key) return v.get();
  }
  return nullptr;
}

PickleValue* PickleValue::get(std::string_view key) {
  return const_cast<PickleValue*>(static_cast<const PickleValue*>(this)->get(key));
}

void PickleValue::set(std::string_view key, PickleRef value) {
  for (auto& [k, v] : dict) {
    if (k->type == PickleType::kStr && k->s == key) {
      v = std::move(value);
      return;
    }
  }
  dict.emplace_back(PickleValue::str(std::string(key)), std::move(value));
}

const char* type_name(PickleType t) {
  switch (t) {
    case PickleType::kNone:
      return "None";
    case PickleType::kBool:
      return "bool";
    case PickleType::kInt:
      return "int";
    case PickleType::kFloat:
      return "float";
    case PickleType::kStr:
      return "str";
    case PickleType::kBytes:
      return "bytes";
    case PickleType::kList:
      return "list";
    case PickleType::kTuple:
      return "tuple";
    case PickleType::kDict:
      return "dict";
  }
  return "?";
}

}  // namespace racelab::alloc
