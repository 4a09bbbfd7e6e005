#pragma once
// Python pickle values, as far as memory_viz snapshots need them (torch.cuda.memory._dump_snapshot
// writes protocol 4; Python 3.14's default, protocol 5, and protocols 2 and 3 are read too). The
// reader is strict and bounded: every length in the file is checked against the bytes that remain
// before anything is allocated, memo references must exist, containers may not contain themselves,
// nesting is limited, and any problem is an InputError "<origin>: byte <offset>: expected <what>,
// got <what>".
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace racelab::alloc {

// How deep containers may nest, in what is read and in what is written.
inline constexpr int kMaxPickleDepth = 100;

enum class PickleType { kNone, kBool, kInt, kFloat, kStr, kBytes, kList, kTuple, kDict };

// A value of the pickled tree. Not called PyObject: racelab embeds CPython (racelab live python),
// whose PyObject is a different type, and a reader of either should never wonder which is meant.
struct PickleValue;
using PickleRef = std::shared_ptr<PickleValue>;

struct PickleValue {
  PickleType type = PickleType::kNone;
  bool b = false;
  // Set by the streaming snapshot reader on a trace event's containers once it has read them (a
  // later change to one would have to change that event too, so the reader refuses it), with the
  // height of the container's nesting (1: it holds no container), which it checks once.
  bool frozen = false;
  std::int16_t height = 0;
  std::int64_t i = 0;
  double f = 0;
  std::string s;                                      // kStr (UTF-8) and kBytes
  std::vector<PickleRef> items;                       // kList, kTuple
  std::vector<std::pair<PickleRef, PickleRef>> dict;  // kDict, in insertion order

  static PickleRef none();
  static PickleRef boolean(bool v);
  static PickleRef integer(std::int64_t v);
  static PickleRef real(double v);
  static PickleRef str(std::string v);
  static PickleRef bytes(std::string v);
  static PickleRef list(std::vector<PickleRef> v = {});
  static PickleRef tuple(std::vector<PickleRef> v = {});
  static PickleRef new_dict();

  // Dict access by string key: nullptr when absent (or when this is not a dict).
  const PickleValue* get(std::string_view key) const;
  PickleValue* get(std::string_view key);
  void set(std::string_view key, PickleRef value);  // replaces or appends

  bool is_int() const { return type == PickleType::kInt; }
  bool is_str() const { return type == PickleType::kStr; }
  bool is_list() const { return type == PickleType::kList || type == PickleType::kTuple; }
  bool is_dict() const { return type == PickleType::kDict; }
};

// Python's name for a type ("int", "str", "dict", ...), used in messages.
const char* type_name(PickleType t);

// Parses a pickle. `origin` names the file in messages.
PickleRef read_pickle(std::string_view data, const std::string& origin);

// Writes protocol 4 (what PyTorch writes), strings memoised, containers batched like CPython.
std::string write_pickle(const PickleValue& root);

// JSON equivalent: dicts become objects (keys must be str), lists and tuples arrays, bytes are
// rejected. from_json turns arrays into lists except under the key "segment_pool_id", which
// PyTorch writes as a tuple.
nlohmann::ordered_json to_json(const PickleValue& value, const std::string& origin);
PickleRef from_json(const nlohmann::ordered_json& value, const std::string& origin);

}  // namespace racelab::alloc
